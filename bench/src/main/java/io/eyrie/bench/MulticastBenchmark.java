package io.eyrie.bench;

import io.eyrie.chirper.Latencies;
import io.eyrie.multicast.testing.RawRatisBaseline;

import io.eyrie.multicast.EchoDeliverers;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.TlsConfig;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MulticastClient;
import io.eyrie.multicast.Node;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.multicast.NodeStats;
import io.eyrie.multicast.NodeOptions.RaftTransport;
import java.nio.file.Path;
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
 *     [--isolated 300] [--dssmr true] [--raw true] [--groups 1,2,4] [--event-loop-threads N] [--channel-window W]
 *     [--submit-in-flight F] [--jit-warmup 120] [--tls true|false] [--raft-transport netty|grpc]
 * </pre>
 *
 * <p>{@code --isolated} multicasts one at a time per group count (0 skips that phase); {@code
 * --dssmr false} skips the DS-SMR phases, {@code --raw false} the raw Ratis one; {@code --groups}
 * chooses the loaded multicast phases (for profiling one); the last three override Eyrie's defaults (for
 * choosing them by measurement). {@code --jit-warmup S} first runs the loaded multicast phases,
 * unmeasured, in rounds of 4 s each until the JIT compiled for less than 10% of a round, for at
 * most S seconds (0 skips it): on 2 cores the JIT's one C2 thread competes with the load and
 * took 85-100 s to catch up, so without it the first phases measured the compiler as much as the
 * multicast (bench/results/HISTORY.md, "Issue 15, seventh session"). {@code --tls true} runs
 * mutual TLS on both ports of every node (development certificates); {@code --raft-transport grpc}
 * runs the nodes' Raft ports, and the raw Ratis group, on Ratis's gRPC instead of Eyrie's Netty RPC
 * (the default), to compare the two (issue 28); the report names both. Neither reaches the DS-SMR
 * phases, which run their own bank cluster on the defaults ({@code --dssmr false} for the comparison).
 */
public final class MulticastBenchmark {

  /**
   * One measured phase: throughput, latency percentiles (ms), errors, a cost description, the
   * process CPU time per operation over the measured window (ms, every thread of this JVM:
   * servers and clients), and Ratis log entries per operation (NaN where not counted).
   */
  public record Row(String name, int groups, double opsPerSec, double p50, double p99, long errors, String cost,
      double cpuMsPerOp, double entriesPerOp) {
    /** A row without CPU and log-entry figures. */
    public Row(String name, int groups, double opsPerSec, double p50, double p99, long errors, String cost) {
      this(name, groups, opsPerSec, p50, p99, errors, cost, Double.NaN, Double.NaN);
    }
  }

  /** Milliseconds the JIT compilers have spent compiling in this JVM, or -1 if the JVM cannot say. */
  static long jitMillis() {
    java.lang.management.CompilationMXBean jit = java.lang.management.ManagementFactory.getCompilationMXBean();
    return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : -1;
  }

  /** One multicast to {@code k} distinct random groups, from the clients in turn. */
  private static CompletableFuture<?> randomMulticast(int k, List<GroupId> groups, List<MulticastClient> mc,
      AtomicInteger turn, byte[] payload) {
    TreeSet<GroupId> dests = new TreeSet<>();
    ThreadLocalRandom r = ThreadLocalRandom.current();
    while (dests.size() < k) {
      dests.add(groups.get(r.nextInt(groups.size())));
    }
    return mc.get(Math.floorMod(turn.getAndIncrement(), mc.size())).multicast(dests, payload);
  }

  /** Process CPU time of this JVM in nanoseconds (all threads), or -1 if the JVM cannot say. */
  public static long processCpuNanos() {
    java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    return os instanceof com.sun.management.OperatingSystemMXBean sun ? sun.getProcessCpuTime() : -1;
  }

  public static void main(String[] args) throws Exception {
    BenchArgs o = BenchArgs.parse(args);
    if (o.has("event-loop-threads")) {
      // Before anything loads the shaded Netty (for comparing settings, one JVM per setting).
      System.setProperty(NodeOptions.EVENT_LOOP_THREADS_PROPERTY, o.string("event-loop-threads", null));
    }
    if (System.getProperty(NodeOptions.EVENT_LOOP_THREADS_PROPERTY) == null) {
      System.setProperty(NodeOptions.EVENT_LOOP_THREADS_PROPERTY, String.valueOf(NodeOptions.EVENT_LOOP_THREADS_DEFAULT));
    }
    io.eyrie.multicast.Node.prepareJvm();
    boolean dssmr = o.bool("dssmr", true);
    int isolated = o.integer("isolated", 300);
    boolean rawPhase = o.bool("raw", true);
    int[] groupCounts = o.list("groups", "1,2,4").stream().mapToInt(Integer::parseInt).toArray();
    NodeOptions.Builder nob = NodeOptions.newBuilder();
    if (o.has("channel-window")) {
      nob.channelWindow(o.integer("channel-window", 0));
    }
    if (o.has("submit-in-flight")) {
      nob.submitInFlight(o.integer("submit-in-flight", 0));
    }
    RaftTransport transport = RaftTransport.of(o.string("raft-transport", NodeOptions.RAFT_TRANSPORT_DEFAULT.label()));
    nob.raftTransport(transport);
    boolean tls = o.bool("tls", false);
    NodeOptions nodeOptions = nob.build();
    int duration = o.integer("duration", 20);
    int warmup = o.integer("warmup", 5);
    int clients = o.integer("clients", 8);
    int window = o.integer("window", 16);
    Path out = o.path("out", "bench/results");
    byte[] payload = new byte[64];
    new Random(1).nextBytes(payload);
    List<Row> rows = new ArrayList<>();

    System.out.printf("raw Ratis baseline: %d clients x %d outstanding, %ds warm-up, %ds measured; %s=%s, channel window %d,"
        + " submit in flight %d; Raft transport %s, TLS %s%n", clients, window, warmup, duration,
        NodeOptions.EVENT_LOOP_THREADS_PROPERTY,
        System.getProperty(NodeOptions.EVENT_LOOP_THREADS_PROPERTY),
        nodeOptions.channelWindow(), nodeOptions.submitInFlight(), transport.label(), tls ? "on" : "off");
    if (rawPhase) try (RawRatisBaseline raw = new RawRatisBaseline(transport)) {
      List<RaftClient> rc = new ArrayList<>();
      for (int i = 0; i < clients; i++) {
        rc.add(raw.newClient());
      }
      Message msg = Message.valueOf(ByteString.copyFrom(payload));
      AtomicInteger rr = new AtomicInteger();
      rows.add(phase("raw Ratis, no-op SM", 1, clients * window, warmup, duration,
          () -> raw.send(rc.get(Math.floorMod(rr.getAndIncrement(), rc.size())), msg), () -> "1 log entry per op",
          null));
      closeInBackground(rc);
    }

    List<Row> isolatedRows = new ArrayList<>();
    // --tls: mutual TLS on both ports of every node, clients with a client certificate (issue 28's cost).
    Path certs = tls ? devCertificates() : null;
    EmbeddedCluster.Builder cb = EmbeddedCluster.newBuilder().nodes(3).partitions(4).options(nodeOptions)
        .deliverers(new EchoDeliverers());
    if (certs != null) {
      cb.tls(certs);
    }
    try (EmbeddedCluster cluster = cb.start()) {
      List<MulticastClient> mc = new ArrayList<>();
      for (int i = 0; i < clients; i++) {
        mc.add(certs == null ? cluster.newClient() : cluster.newClient(TlsConfig.fromDir(certs, "client-bench")));
      }
      List<GroupId> groups = new ArrayList<>(cluster.cluster().groupIds());
      int jitWarmup = o.integer("jit-warmup", 120);
      long warmStart = System.nanoTime();
      // Rounds of 4 s per loaded phase until the JIT compiled for less than 10% of a round, or
      // for at most --jit-warmup seconds.
      while (jitWarmup > 0 && (System.nanoTime() - warmStart) / 1e9 < jitWarmup) {
        long jit0 = jitMillis();
        long r0 = System.nanoTime();
        for (int k : groupCounts) {
          AtomicInteger rr = new AtomicInteger();
          phase("warm-up", k, clients * window, 4, 0, () -> randomMulticast(k, groups, mc, rr, payload),
              () -> "", null, false);
        }
        double share = jit0 < 0 ? 0 : (jitMillis() - jit0) / ((System.nanoTime() - r0) / 1e6);
        System.out.printf(Locale.ROOT, "JIT warm-up: %.0f s, the JIT compiled %.0f%% of the last round%n",
            (System.nanoTime() - warmStart) / 1e9, 100 * share);
        if (share < 0.10) {
          break;
        }
      }
      for (int k : groupCounts) {
        System.out.printf("multicast to %d group(s)%n", k);
        AtomicInteger rr = new AtomicInteger();
        Map<String, Long> before = traffic(cluster);
        long[] opsHolder = new long[1];
        Row row = phase("multicast", k, clients * window, warmup, duration, () -> {
          opsHolder[0]++;
          return randomMulticast(k, groups, mc, rr, payload);
        }, () -> {
          Map<String, Long> after = traffic(cluster);
          double ops = Math.max(1, opsHolder[0]);
          return String.format(Locale.ROOT, "%.3f start batches, %.3f channel batches, %.2f channel items, %.0f channel bytes per op",
              (after.get("entries") - before.get("entries")) / ops, (after.get("batches") - before.get("batches")) / ops,
              (after.get("items") - before.get("items")) / ops, (after.get("bytes") - before.get("bytes")) / ops);
        }, () -> logEntries(cluster));
        rows.add(row);
      }
      if (isolated > 0) {
        for (int k : new int[] {1, 2, 4}) {
          isolatedRows.add(isolated(cluster, mc.get(0), groups, k, isolated, payload));
        }
      }
      closeInBackground(mc);
    }
    if (dssmr) {
      if (tls || transport != NodeOptions.RAFT_TRANSPORT_DEFAULT) {
        System.out.println("note: the DS-SMR phases run on their own bank cluster with the default Raft transport and no"
            + " TLS (--dssmr false leaves them out)");
      }
      rows.addAll(DssmrOpsBenchmark.run(clients, window, warmup, duration));
    }
    rows.addAll(isolatedRows);
    MulticastReport.write(out, rows, clients, window, warmup, duration, transport, tls);
    System.exit(0);
  }

  /** Writes a development CA and certificates for nodes 1-3 and client "bench" ({@code eyrie certs}) to a temporary directory. */
  static Path devCertificates() throws java.io.IOException {
    Path dir = java.nio.file.Files.createTempDirectory("eyrie-bench-certs");
    java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
    int code = io.eyrie.tools.EyrieMain.run(new String[] {"certs", "--out", dir.toString(), "--nodes", "1,2,3",
        "--client", "bench"}, new java.io.PrintStream(java.io.OutputStream.nullOutputStream()),
        new java.io.PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8));
    if (code != 0) {
      throw new IllegalStateException("eyrie certs failed: " + err.toString(java.nio.charset.StandardCharsets.UTF_8));
    }
    return dir;
  }

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
    Map<String, Long> m = new HashMap<>(Map.of("entries", 0L, "batches", 0L, "items", 0L, "bytes", 0L, "log", 0L));
    for (Node n : c.runningNodes().values()) {
      NodeStats.Traffic t = n.traffic();
      m.merge("entries", t.startEntries(), Long::sum);
      m.merge("batches", t.channelBatches(), Long::sum);
      m.merge("items", t.channelItems(), Long::sum);
      m.merge("bytes", t.channelBytes(), Long::sum);
      m.merge("log", t.logEntries(), Long::sum);
    }
    return m;
  }

  /** Ratis log entries written through the nodes' traffic counters (start entries and channel batches). */
  public static long logEntries(EmbeddedCluster c) {
    return traffic(c).get("log");
  }

  /**
   * One multicast at a time (the next starts when the previous one answered) to {@code k}
   * random groups: the latency of the protocol itself, without queueing. A short warm-up of
   * 20 multicasts is not measured.
   */
  static Row isolated(EmbeddedCluster cluster, MulticastClient c, List<GroupId> groups, int k, int count, byte[] payload)
      throws Exception {
    System.out.printf("isolated multicast to %d group(s): %d one at a time%n", k, count);
    Latencies lat = new Latencies();
    long errors = 0;
    long entries0 = 0;
    long cpu0 = 0;
    long t0 = 0;
    Random r = new Random(k);
    for (int i = -20; i < count; i++) {
      if (i == 0) {
        entries0 = logEntries(cluster);
        cpu0 = processCpuNanos();
        t0 = System.nanoTime();
      }
      TreeSet<GroupId> dests = new TreeSet<>();
      while (dests.size() < k) {
        dests.add(groups.get(r.nextInt(groups.size())));
      }
      long s = System.nanoTime();
      try {
        c.multicast(dests, payload).get(30, java.util.concurrent.TimeUnit.SECONDS);
        if (i >= 0) {
          lat.add(System.nanoTime() - s);
        }
      } catch (Exception e) {
        if (i >= 0) {
          errors++;
        }
      }
    }
    double secs = (System.nanoTime() - t0) / 1e9;
    double[] q = lat.quantilesMs(0, 0.5, 0.99);
    Row row = new Row("isolated multicast (one at a time)", k, count / secs, q[0], q[1], errors,
        "one outstanding multicast", (processCpuNanos() - cpu0) / 1e6 / count,
        (logEntries(cluster) - entries0) / (double) count);
    System.out.printf(Locale.ROOT, "  => p50 %.2f ms, p99 %.2f ms, errors %d, %.2f ms CPU and %.2f log entries per op%n",
        row.p50(), row.p99(), row.errors(), row.cpuMsPerOp(), row.entriesPerOp());
    return row;
  }

  /** Runs a closed loop with a fixed number of operations outstanding; measures after warm-up. */
  public static Row phase(String name, int groups, int outstanding, int warmupS, int durationS,
      Supplier<CompletableFuture<?>> op, Supplier<String> cost) {
    return phase(name, groups, outstanding, warmupS, durationS, op, cost, null);
  }

  /**
   * Runs a closed loop with a fixed number of operations outstanding; measures after warm-up,
   * with process CPU time and, if {@code logEntries} (a running count of Ratis log entries) is
   * given, log entries per operation; without it a phase counts one entry per operation.
   */
  public static Row phase(String name, int groups, int outstanding, int warmupS, int durationS,
      Supplier<CompletableFuture<?>> op, Supplier<String> cost, Supplier<Long> logEntries) {
    return phase(name, groups, outstanding, warmupS, durationS, op, cost, logEntries, true);
  }

  private static Row phase(String name, int groups, int outstanding, int warmupS, int durationS,
      Supplier<CompletableFuture<?>> op, Supplier<String> cost, Supplier<Long> logEntries, boolean print) {
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
    long entries0 = logEntries == null ? 0 : logEntries.get();
    long cpu0 = processCpuNanos();
    long jit0 = jitMillis();
    measuring.set(true);
    long t0 = System.nanoTime();
    for (int s = 0; s < durationS; s++) {
      sleepS(1);
      System.out.printf("  %3ds  %8.0f ops/s%n", s + 1, done.get() / ((System.nanoTime() - t0) / 1e9));
    }
    measuring.set(false);
    double secs = (System.nanoTime() - t0) / 1e9;
    long cpu = processCpuNanos() - cpu0;
    long jitMs = jit0 < 0 ? -1 : jitMillis() - jit0;
    long entries = logEntries == null ? -1 : logEntries.get() - entries0;
    String c = cost.get();
    stop.set(true);
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (inFlight.get() > 0 && System.nanoTime() < deadline) {
      LockSupport.parkNanos(10_000_000L);
    }
    double[] q = lat.quantilesMs(0, 0.5, 0.99);
    double n = Math.max(1, done.get());
    Row row = new Row(name, groups, done.get() / secs, q[0], q[1], errors.get(),
        c, cpu0 < 0 ? Double.NaN : cpu / 1e6 / n, logEntries == null ? Double.NaN : entries / n);
    if (!print) {
      return row;
    }
    System.out.printf(Locale.ROOT, "  => %.0f ops/s, p50 %.2f ms, p99 %.2f ms, errors %d, %.2f ms CPU/op, %.3f log entries/op;"
        + " %s; JIT compiling %d ms in the %.0f s window%n", row.opsPerSec(), row.p50(), row.p99(), row.errors(),
        row.cpuMsPerOp(), row.entriesPerOp(), row.cost(), jitMs, secs);
    return row;
  }

  private static void sleepS(int s) {
    long end = System.nanoTime() + s * 1_000_000_000L;
    while (System.nanoTime() < end) {
      LockSupport.parkNanos(end - System.nanoTime());
    }
  }
}
