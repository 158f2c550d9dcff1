package io.eyrie.multicast.internal;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.ratis.metrics.LongCounter;
import org.apache.ratis.metrics.MetricRegistries;
import org.apache.ratis.metrics.MetricRegistryInfo;
import org.apache.ratis.metrics.RatisMetricRegistry;
import org.apache.ratis.metrics.Timekeeper;
import org.apache.ratis.util.TimeDuration;

/**
 * Ratis's metric registries, made cheap: found by Ratis through {@link java.util.ServiceLoader}
 * (this module's {@code META-INF/services}) in place of {@code ratis-metrics-default}.
 *
 * <p>Why: Ratis times every request, append and apply with a Dropwizard timer whose
 * exponentially decaying reservoir inserts each sample into a concurrent skip list. A JFR
 * profile of the multicast benchmark found 15% of all sampled CPU in those timers. Here a
 * timer is a count, a sum and a histogram of power-of-two buckets, each one atomic add, which
 * is enough for what is exported ({@code /metrics}: count, total and an upper bound of the
 * 99th percentile). Counters are {@link LongAdder}s; gauges are Ratis's suppliers, read only
 * when exported. There is no JMX or console reporter: {@code /metrics} is the export.
 */
public final class LightMetricRegistries extends MetricRegistries {
  private final Map<MetricRegistryInfo, Registry> registries = new ConcurrentHashMap<>();
  private final List<Consumer<RatisMetricRegistry>> onAdd = new CopyOnWriteArrayList<>();
  private final List<Consumer<RatisMetricRegistry>> onRemove = new CopyOnWriteArrayList<>();

  /** For {@link java.util.ServiceLoader}. */
  public LightMetricRegistries() {}

  @Override
  public void clear() {
    registries.keySet().forEach(this::remove);
  }

  @Override
  public RatisMetricRegistry create(MetricRegistryInfo info) {
    boolean[] created = {false};
    Registry r = registries.computeIfAbsent(info, i -> {
      created[0] = true;
      return new Registry(i);
    });
    if (created[0]) {
      onAdd.forEach(c -> c.accept(r));
    }
    return r;
  }

  @Override
  public boolean remove(MetricRegistryInfo info) {
    Registry r = registries.remove(info);
    if (r != null) {
      onRemove.forEach(c -> c.accept(r));
    }
    return r != null;
  }

  @Override
  public Optional<RatisMetricRegistry> get(MetricRegistryInfo info) {
    return Optional.ofNullable(registries.get(info));
  }

  @Override
  public Set<MetricRegistryInfo> getMetricRegistryInfos() {
    return Set.copyOf(registries.keySet());
  }

  @Override
  public Collection<RatisMetricRegistry> getMetricRegistries() {
    return new ArrayList<>(registries.values());
  }

  @Override
  public void addReporterRegistration(Consumer<RatisMetricRegistry> add, Consumer<RatisMetricRegistry> remove) {
    onAdd.add(add);
    onRemove.add(remove);
  }

  @Override
  public void removeReporterRegistration(Consumer<RatisMetricRegistry> add, Consumer<RatisMetricRegistry> remove) {
    onAdd.remove(add);
    onRemove.remove(remove);
  }

  @Override
  public void enableJmxReporter() {
    // Nothing to do: the metrics are exported by the node's /metrics endpoint.
  }

  @Override
  public void enableConsoleReporter(TimeDuration period) {
    // Nothing to do: the metrics are exported by the node's /metrics endpoint.
  }

  /** One registry: Ratis's metrics of one server, group and component, by name. */
  public static final class Registry implements RatisMetricRegistry {
    private final MetricRegistryInfo info;
    private final Map<String, Object> metrics = new ConcurrentHashMap<>();

    Registry(MetricRegistryInfo info) {
      this.info = info;
    }

    @Override
    public Timekeeper timer(String name) {
      Object m = metrics.computeIfAbsent(name, n -> new Timer());
      return m instanceof Timer t ? t : new Timer();
    }

    @Override
    public LongCounter counter(String name) {
      Object m = metrics.computeIfAbsent(name, n -> new Counter());
      return m instanceof Counter c ? c : new Counter();
    }

    @Override
    public boolean remove(String name) {
      return metrics.remove(name) != null;
    }

    @Override
    public <T> void gauge(String name, Supplier<Supplier<T>> gaugeSupplier) {
      metrics.put(name, new Gauge(gaugeSupplier.get()));
    }

    @Override
    public MetricRegistryInfo getMetricRegistryInfo() {
      return info;
    }

    /** A copy of the metrics by name: {@link Timer}, {@link Counter} or {@link Gauge}. */
    public Map<String, Object> metrics() {
      return Map.copyOf(metrics);
    }
  }

  /** A gauge: Ratis's supplier, read when exported. */
  public record Gauge(Supplier<?> value) {}

  /** A counter. */
  public static final class Counter implements LongCounter {
    private final LongAdder count = new LongAdder();

    @Override
    public void inc(long n) {
      count.add(n);
    }

    @Override
    public void dec(long n) {
      count.add(-n);
    }

    @Override
    public long getCount() {
      return count.sum();
    }
  }

  /**
   * A timer: how many, their total, and a histogram whose bucket {@code b} counts durations
   * below {@code 2^b} microseconds (the last bucket takes the rest).
   */
  public static final class Timer implements Timekeeper {
    static final int BUCKETS = 40;
    private final LongAdder count = new LongAdder();
    private final LongAdder totalNanos = new LongAdder();
    private final AtomicLongArray buckets = new AtomicLongArray(BUCKETS);

    @Override
    public Context time() {
      long start = System.nanoTime();
      return () -> {
        long d = System.nanoTime() - start;
        record(d);
        return d;
      };
    }

    /** Records one duration in nanoseconds (negative counts as 0). */
    public void record(long nanos) {
      long n = Math.max(0, nanos);
      count.increment();
      totalNanos.add(n);
      long micros = n / 1000;
      int b = micros == 0 ? 0 : Math.min(BUCKETS - 1, 64 - Long.numberOfLeadingZeros(micros));
      buckets.incrementAndGet(b);
    }

    public long count() {
      return count.sum();
    }

    public long totalNanos() {
      return totalNanos.sum();
    }

    /**
     * An upper bound of the {@code q} quantile in seconds: the top of the bucket that holds it
     * (within a factor of 2), or 0 if nothing was recorded.
     */
    public double quantileUpperBoundSeconds(double q) {
      long[] c = new long[BUCKETS];
      long total = 0;
      for (int i = 0; i < BUCKETS; i++) {
        c[i] = buckets.get(i);
        total += c[i];
      }
      if (total == 0) {
        return 0;
      }
      long rank = (long) Math.ceil(q * total);
      long seen = 0;
      for (int i = 0; i < BUCKETS; i++) {
        seen += c[i];
        if (seen >= rank) {
          return Math.pow(2, i) / 1e6;
        }
      }
      return Math.pow(2, BUCKETS - 1) / 1e6;
    }
  }
}
