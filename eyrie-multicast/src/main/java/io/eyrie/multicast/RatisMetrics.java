package io.eyrie.multicast;

import io.eyrie.multicast.internal.LightMetricRegistries;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.apache.ratis.metrics.MetricRegistries;
import org.apache.ratis.metrics.MetricRegistryInfo;
import org.apache.ratis.metrics.RatisMetricRegistry;

/**
 * Ratis's own metrics (elections, log appends and flushes, commit and apply indexes, request
 * timers) of every Ratis server and client in this JVM, in Prometheus text form. Ratis keeps
 * them in registries per server, group and component; Eyrie supplies those registries
 * ({@code LightMetricRegistries}: counters, gauges and timers that cost one atomic add per
 * sample). A metric {@code ratis.<component>.<registry prefix>.<metric>} is exported as {@code
 * ratis_<component>_<metric>} with the registry as a label, so a metric's name is the same for
 * every group; a timer gives {@code _count}, {@code _seconds_sum} and {@code _p99} (an upper
 * bound within a factor of 2).
 */
public final class RatisMetrics {
  private RatisMetrics() {}

  /** The text, one {@code # TYPE} line per metric name followed by its samples. */
  public static String prometheusText() {
    Map<String, List<String>> byName = new TreeMap<>();
    for (RatisMetricRegistry r : MetricRegistries.global().getMetricRegistries()) {
      if (!(r instanceof LightMetricRegistries.Registry light)) {
        continue;
      }
      MetricRegistryInfo info = r.getMetricRegistryInfo();
      String base = "ratis_" + clean(info.getMetricsComponentName());
      String label = "{registry=\"" + info.getPrefix().replace("\\", "\\\\").replace("\"", "\\\"") + "\"}";
      for (Map.Entry<String, Object> e : light.metrics().entrySet()) {
        String key = e.getKey();
        int at = key.indexOf(info.getPrefix() + ".");
        String name = base + "_" + clean(at >= 0 ? key.substring(at + info.getPrefix().length() + 1) : key);
        Object m = e.getValue();
        if (m instanceof LightMetricRegistries.Gauge g) {
          Object v;
          try {
            v = g.value().get();
          } catch (RuntimeException ex) {
            continue;
          }
          if (v instanceof Number n) {
            add(byName, name, label, n.doubleValue());
          }
        } else if (m instanceof LightMetricRegistries.Counter c) {
          add(byName, name + "_count", label, c.getCount());
        } else if (m instanceof LightMetricRegistries.Timer t) {
          add(byName, name + "_count", label, t.count());
          add(byName, name + "_seconds_sum", label, t.totalNanos() / 1e9);
          add(byName, name + "_p99", label, t.quantileUpperBoundSeconds(0.99));
        }
      }
    }
    StringBuilder b = new StringBuilder();
    byName.forEach((name, lines) -> {
      b.append("# TYPE ").append(name).append(" untyped\n");
      lines.forEach(l -> b.append(l).append('\n'));
    });
    return b.toString();
  }

  private static void add(Map<String, List<String>> byName, String name, String label, double v) {
    byName.computeIfAbsent(name, k -> new ArrayList<>()).add(name + label + " " + v);
  }

  private static String clean(String s) {
    String t = s.replaceAll("[^A-Za-z0-9_]", "_").replaceAll("_+", "_");
    return t.toLowerCase(Locale.ROOT);
  }
}
