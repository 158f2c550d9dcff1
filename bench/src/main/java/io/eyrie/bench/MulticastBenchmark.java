package io.eyrie.bench;

import io.eyrie.chirper.Latencies;
import io.eyrie.multicast.testing.RawRatisBaseline;

import io.eyrie.multicast.EchoDeliverers;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MulticastClient;
import io.eyrie.multicast.Node;
import io.eyrie.multicast.NodeTraffic;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * Throughput and latency of atomic multicast to 1, 2 and 4 groups on an embedded 3-node
 * cluster, and in the same run of a raw Ratis write to a no-op state machine (one request per
 * operation): the limit for one group on this machine.
 *
 * <pre>
 * bin/bench multicast [--duration 20] [--warmup 5] [--clients 8] [--window 16] [--out bench/results]
 * </pre>
 */
public final class MulticastBenchmark {

  /** One measured phase: throughput, latency percentiles (ms), errors and a cost description. */
  public record Row(String name, int groups, double opsPerSec, double p50, double p99, long errors, String cost) {}

  public static void main(String[] args) throws Exception {
    Map<String, String> o = parse(args);
    int duration = Integer.parseInt(o.getOrDefault("duration", "20"));
    int warmup = Integer.parseInt(o.getOrDefault("warmup", "5"));
    int clients = Integer.parseInt(o.getOrDefault("clients", "8"));
    int window = Integer.parseInt(o.getOrDefault("window", "16"));
    Path out = Path.of(o.getOrDefault("out", "bench/results"));
    byte[] payload = new byte[64];
    new Random(1).nextBytes(payload);
    List<Row> rows = new ArrayList<>();

    System.out.printf("raw Ratis baseline: %d clients x %d outstanding, %ds warm-up, %ds measured%n", clients, window,
        warmup, duration);
    try (RawRatisBaseline raw = new RawRatisBaseline()) {
      List<RaftClient> rc = new ArrayList<>();
      for (int i = 0; i < clients; i++) {
        rc.add(raw.newClient());
      }
      Message msg = Message.valueOf(ByteString.copyFrom(payload));
      AtomicInteger rr = new AtomicInteger();
      rows.add(phase("raw Ratis, no-op SM", 1, clients * window, warmup, duration,
          () -> raw.send(rc.get(Math.floorMod(rr.getAndIncrement(), rc.size())), msg), () -> "1 log entry per op"));
      closeInBackground(rc);
    }

    try (EmbeddedCluster cluster = EmbeddedCluster.newBuilder().nodes(3).partitions(4)
        .deliverers(new EchoDeliverers()).start()) {
      List<MulticastClient> mc = new ArrayList<>();
      for (int i = 0; i < clients; i++) {
        mc.add(cluster.newClient());
      }
      List<GroupId> groups = new ArrayList<>(cluster.cluster().groupIds());
      for (int k : new int[] {1, 2, 4}) {
        System.out.printf("multicast to %d group(s)%n", k);
        AtomicInteger rr = new AtomicInteger();
        Map<String, Long> before = traffic(cluster);
        long[] opsHolder = new long[1];
        Row row = phase("multicast", k, clients * window, warmup, duration, () -> {
          TreeSet<GroupId> dests = new TreeSet<>();
          ThreadLocalRandom r = ThreadLocalRandom.current();
          while (dests.size() < k) {
            dests.add(groups.get(r.nextInt(groups.size())));
          }
          opsHolder[0]++;
          return mc.get(Math.floorMod(rr.getAndIncrement(), mc.size())).multicast(dests, payload);
        }, () -> {
          Map<String, Long> after = traffic(cluster);
          double ops = Math.max(1, opsHolder[0]);
          return String.format(Locale.ROOT, "%.3f start entries, %.3f channel batches, %.2f channel items, %.0f channel bytes per op",
              (after.get("entries") - before.get("entries")) / ops, (after.get("batches") - before.get("batches")) / ops,
              (after.get("items") - before.get("items")) / ops, (after.get("bytes") - before.get("bytes")) / ops);
        });
        rows.add(row);
      }
      closeInBackground(mc);
    }
    rows.addAll(DssmrOpsBenchmark.run(clients, window, warmup, duration));
    write(out, rows, clients, window, warmup, duration);
    System.exit(0);
  }

  /** Closes clients without waiting: a Ratis client's close can wait long for its connections. */
  /** Closes clients on a daemon thread (a client of a stopped group can take long to close). */
  public static void closeInBackground(List<? extends AutoCloseable> clients) {
    Thread t = new Thread(() -> {
      for (AutoCloseable c : clients) {
        try {
          c.close();
        } catch (Exception e) {
          // the run is over; a client that fails to close changes no result
        }
      }
    }, "bench-close");
    t.setDaemon(true);
    t.start();
  }

  /** Sums the nodes' traffic counters: start entries, channel batches, items and bytes. */
  public static Map<String, Long> traffic(EmbeddedCluster c) {
    Map<String, Long> m = new HashMap<>(Map.of("entries", 0L, "batches", 0L, "items", 0L, "bytes", 0L));
    for (Node n : c.runningNodes().values()) {
      NodeTraffic t = n.traffic();
      m.merge("entries", t.startEntries(), Long::sum);
      m.merge("batches", t.channelBatches(), Long::sum);
      m.merge("items", t.channelItems(), Long::sum);
      m.merge("bytes", t.channelBytes(), Long::sum);
    }
    return m;
  }

  /** Runs a closed loop with a fixed number of operations outstanding; measures after warm-up. */
  public static Row phase(String name, int groups, int outstanding, int warmupS, int durationS,
      Supplier<CompletableFuture<?>> op, Supplier<String> cost) {
    AtomicBoolean stop = new AtomicBoolean();
    AtomicBoolean measuring = new AtomicBoolean();
    AtomicLong done = new AtomicLong();
    AtomicLong errors = new AtomicLong();
    AtomicInteger inFlight = new AtomicInteger();
    Latencies lat = new Latencies();
    Runnable[] launch = new Runnable[1];
    launch[0] = () -> {
      if (stop.get()) {
        return;
      }
      inFlight.incrementAndGet();
      long t0 = System.nanoTime();
      op.get().whenComplete((r, e) -> {
        inFlight.decrementAndGet();
        if (measuring.get()) {
          if (e == null) {
            lat.add(System.nanoTime() - t0);
            done.incrementAndGet();
          } else {
            errors.incrementAndGet();
          }
        }
        launch[0].run();
      });
    };
    for (int i = 0; i < outstanding; i++) {
      launch[0].run();
    }
    sleepS(warmupS);
    measuring.set(true);
    long t0 = System.nanoTime();
    for (int s = 0; s < durationS; s++) {
      sleepS(1);
      System.out.printf("  %3ds  %8.0f ops/s%n", s + 1, done.get() / ((System.nanoTime() - t0) / 1e9));
    }
    measuring.set(false);
    double secs = (System.nanoTime() - t0) / 1e9;
    String c = cost.get();
    stop.set(true);
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (inFlight.get() > 0 && System.nanoTime() < deadline) {
      LockSupport.parkNanos(10_000_000L);
    }
    double[] q = lat.quantilesMs(0, 0.5, 0.99);
    Row row = new Row(name, groups, done.get() / secs, q[0], q[1], errors.get(),
        c);
    System.out.printf("  => %.0f ops/s, p50 %.2f ms, p99 %.2f ms, errors %d; %s%n", row.opsPerSec(), row.p50(),
        row.p99(), row.errors(), row.cost());
    return row;
  }

  private static void sleepS(int s) {
    long end = System.nanoTime() + s * 1_000_000_000L;
    while (System.nanoTime() < end) {
      LockSupport.parkNanos(end - System.nanoTime());
    }
  }

  private static void write(Path dir, List<Row> rows, int clients, int window, int warmup, int duration)
      throws IOException {
    Files.createDirectories(dir);
    StringBuilder csv = new StringBuilder("name,groups,ops_per_sec,p50_ms,p99_ms,errors,cost\n");
    StringBuilder md = new StringBuilder("# Multicast benchmark\n\n");
    md.append("Run ").append(Instant.now()).append(" on ").append(Runtime.getRuntime().availableProcessors())
        .append(" cores (everything, clients included, shares them). ")
        .append(String.format(Locale.ROOT, "%d clients x %d outstanding, %d s warm-up, %d s measured, 64-byte payloads; ",
            clients, window, warmup, duration))
        .append("embedded cluster of 3 nodes, 4 partition groups of 3 replicas, echo deliverers; the last rows are DS-SMR ")
        .append("through the public client on a bank cluster (the oracle and 4 partitions), see DssmrOpsBenchmark.\n\n")
        .append("| path | groups | ops/s | p50 ms | p99 ms | errors | cost per op |\n|---|---|---|---|---|---|---|\n");
    double raw = rows.get(0).opsPerSec();
    for (Row r : rows) {
      csv.append(String.format(Locale.ROOT, "%s,%d,%.0f,%.3f,%.3f,%d,\"%s\"%n", r.name(), r.groups(), r.opsPerSec(),
          r.p50(), r.p99(), r.errors(), r.cost()));
      md.append(String.format(Locale.ROOT, "| %s | %d | %.0f | %.2f | %.2f | %d | %s |%n", r.name(), r.groups(),
          r.opsPerSec(), r.p50(), r.p99(), r.errors(), r.cost()));
    }
    md.append(String.format(Locale.ROOT, "%nOne-group multicast / raw Ratis throughput: **%.2f** (target at least 0.70).%n",
        rows.get(1).opsPerSec() / raw));
    Files.writeString(dir.resolve("multicast.csv"), csv, StandardCharsets.UTF_8);
    Files.writeString(dir.resolve("multicast.md"), md, StandardCharsets.UTF_8);
    System.out.println();
    System.out.println(md);
  }

  static Map<String, String> parse(String[] args) {
    Map<String, String> m = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (!args[i].startsWith("--")) {
        throw new IllegalArgumentException("expected --name value, got " + args[i]);
      }
      m.put(args[i].substring(2), args[i + 1]);
    }
    return m;
  }
}
