package io.eyrie.bench;

import io.eyrie.oracle.OracleStateMachine;
import io.eyrie.chirper.LoadRunner;
import io.eyrie.chirper.Ops;
import io.eyrie.chirper.Workload;
import io.eyrie.multicast.testing.RawRatisBaseline;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * The paper's Table 1 on this machine: Chirper under the Timeline, Post, Follow/unfollow and Mix
 * workloads at several partition counts, S-SMR and DS-SMR back to back on a fresh embedded
 * cluster each (3 nodes; the oracle and P partitions, 3 replicas each), with the same seeded
 * social graph, the same initial placement and the same clients.
 *
 * <p>The graph has communities (users follow inside their community) and users start in
 * partitions chosen by a hash of their id, not by community: S-SMR keeps that static placement;
 * DS-SMR moves users that are used together into one partition. Users are bulk-loaded with their
 * edges ({@link Ops.SeedUser}).
 *
 * <p>Lives in Chirper's package (in the bench module) to drive its load generator.
 *
 * <p>This class reads the command line and runs the cells in order; {@link Table1Cell} runs one
 * cell, {@link Table1Seed} loads its graph, and {@link Table1Report} writes the files.
 */
public final class Table1 {

  /**
   * One measured cell.
   *
   * @param workload workload name
   * @param partitions partitions
   * @param mode ssmr or dssmr
   * @param tput commands per second in the measured window
   * @param p50 median latency (ms)
   * @param p99 99th percentile latency (ms)
   * @param completed commands completed in the window
   * @param timeouts commands that timed out
   * @param movesPerSec move commands per second in the window
   * @param multiShare share of commands that did not run in one partition at once
   * @param startEntries client-start Ratis log entries per command
   * @param channelBatches Ratis requests between groups per command
   * @param channelItems messages between groups per command
   * @param channelBytes bytes between groups per command
   * @param cpuMsPerCmd process CPU time (ms; servers and clients share the JVM) per command in the window
   * @param samples per-second samples of warm-up and window
   * @param largestShare the largest partition's share of the objects at the end of the cell
   *     (the oracle's map; 1/P is perfectly balanced)
   * @param logEntries Ratis log entries per command (start entries plus channel batches)
   */
  record Cell(String workload, int partitions, String mode, double tput, double p50, double p99, long completed,
      long timeouts, double movesPerSec, double multiShare, double startEntries, double channelBatches,
      double channelItems, double channelBytes, double cpuMsPerCmd, List<LoadRunner.Sample> samples,
      double largestShare, double logEntries) {}

  /** The runner's options. */
  record Options(List<Integer> partitions, List<String> workloads, List<String> modes, int duration, int warmup, int postWarmup, int followWarmup,
      int users, int follows, int communities, double inCommunity, int clients, int window, long seed, Path out, boolean baseline,
      int interleave) {}

  private Table1() {}

  public static void main(String[] args) throws Exception {
    Options o;
    try {
      o = parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("bin/bench table1: " + e.getMessage());
      System.err.println(USAGE);
      System.exit(2);
      return;
    }
    int code;
    try {
      code = run(o, System.out);
    } catch (Exception e) {
      e.printStackTrace();
      code = 1;
    }
    // Exit explicitly: threads of closed clusters may still be winding down.
    System.exit(code);
  }

  static final String USAGE = """
      usage: bin/bench table1 [--partitions 1,2,4,8] [--workloads timeline,post,follow,mix]
                              [--duration S] [--warmup S] [--post-warmup S] [--follow-warmup S]
                              [--users N] [--follows N]
                              [--communities N] [--in-community F] [--clients N] [--window N] [--seed N] [--no-baseline]
                              [--modes ssmr,dssmr,graph] [--interleave K]
                              [--out DIR]""";

  static Options parse(String[] args) {
    BenchArgs m = BenchArgs.parse(args, Set.of("no-baseline"));
    List<Integer> parts = new ArrayList<>();
    for (String s : m.list("partitions", "1,2,4,8")) {
      parts.add(Integer.parseInt(s));
    }
    List<String> ws = new ArrayList<>();
    for (String s : m.list("workloads", "timeline,post,follow,mix")) {
      ws.add(Workload.parse(s).name().toLowerCase(Locale.ROOT));
    }
    List<String> modes = new ArrayList<>();
    for (String s : m.list("modes", "ssmr,dssmr")) {
      String mode = s.toLowerCase(Locale.ROOT);
      if (!List.of("ssmr", "dssmr", "graph").contains(mode)) {
        throw new IllegalArgumentException("unknown mode " + s + " (ssmr, dssmr or graph)");
      }
      modes.add(mode);
    }
    int duration = m.integer("duration", 20);
    int warmup = m.integer("warmup", 10);
    return new Options(parts, ws, modes, duration, warmup, m.integer("post-warmup", warmup),
        m.integer("follow-warmup", warmup), m.integer("users", 1000), m.integer("follows", 10),
        m.integer("communities", 64), m.decimal("in-community", 1.0), m.integer("clients", 4),
        m.integer("window", 16), m.longValue("seed", 42), m.path("out", "bench/results/table1"),
        !m.has("no-baseline"), positive(m.string("interleave", "1"), "interleave"));
  }

  private static int positive(String v, String name) {
    int n = Integer.parseInt(v);
    if (n < 1) {
      throw new IllegalArgumentException("--" + name + " must be at least 1, got " + v);
    }
    return n;
  }

  /** Runs every cell and writes the outputs; returns the exit code. */
  static int run(Options o, PrintStream out) throws Exception {
    Files.createDirectories(o.out());
    out.printf(Locale.ROOT, "Table 1: partitions %s, workloads %s, %d s warm-up (post %d s, follow %d s) + %d s measured per mode;"
        + " %d users in %d communities, %d follows each, %.0f%% inside the community; %d clients x window %d; seed %d%n",
        o.partitions(), o.workloads(), o.warmup(), o.postWarmup(), o.followWarmup(), o.duration(), o.users(),
        o.communities(), o.follows(),
        100 * o.inCommunity(), o.clients(), o.window(), o.seed());
    List<Cell> cells = new ArrayList<>();
    MulticastBenchmark.Row baseline = null;
    if (o.baseline()) {
      // First, on a fresh JVM: after dozens of clusters (and their background closes) a lone
      // Ratis group is no longer measured fairly.
      baseline = baselineWithDeadline(o, out);
    }
    int total = o.partitions().size() * o.workloads().size() * (o.interleave() > 1 ? 1 : o.modes().size());
    int n = 0;
    List<String> failed = new ArrayList<>();
    Map<String, Map<String, List<Cell>>> windows = new LinkedHashMap<>();
    long t0 = System.nanoTime();
    for (int p : o.partitions()) {
      for (String w : o.workloads()) {
        List<String> modes = o.interleave() > 1 ? List.of(String.join("+", o.modes())) : o.modes();
        for (String mode : modes) {
          n++;
          out.printf(Locale.ROOT, "[%d/%d, %.0f s] %s, %d partition(s), %s%n", n, total,
              (System.nanoTime() - t0) / 1e9, w, p, mode);
          List<Cell> done;
          try {
            if (o.interleave() > 1) {
              Map<String, List<Cell>> byMode = interleaved(o, p, Workload.parse(w), out);
              windows.put(w + " " + p, byMode);
              done = new ArrayList<>();
              byMode.values().forEach(ws -> done.add(Table1Cell.combine(ws)));
            } else {
              done = List.of(cell(o, p, Workload.parse(w), mode, out));
            }
          } catch (Exception e) {
            // One broken cell (a cluster that did not come up in time on a loaded machine)
            // does not throw away the others: say so, leave the cell out and go on.
            failed.add(w + " " + p + " " + mode);
            out.println("    FAILED: " + e);
            continue;
          }
          for (Cell c : done) {
            cells.add(c);
            out.printf(Locale.ROOT, "    %s: %.0f cmd/s, p50 %.1f ms, p99 %.1f ms, %.1f moves/s, %.1f%% multi-partition,"
                + " %.2f ms CPU, %.2f log entries, %.2f channel items and %.0f bytes per command;"
                + " largest partition %.1f%% of the objects%n", c.mode(), c.tput(), c.p50(),
                c.p99(), c.movesPerSec(), 100 * c.multiShare(), c.cpuMsPerCmd(), c.logEntries(), c.channelItems(),
                c.channelBytes(), 100 * c.largestShare());
          }
          Table1Report.writeCsv(o.out().resolve("table1.csv"), cells, baseline);
        }
      }
    }
    if (!windows.isEmpty()) {
      Table1Report.writeWindows(o, o.out().resolve("table1-windows.md"), windows);
    }
    Table1Report.writeMarkdown(o, o.out().resolve("table1.md"), cells, baseline);
    Table1Report.writeCharts(o, cells);
    out.println("wrote " + o.out().resolve("table1.csv") + ", table1.md, table1-throughput.png, table1-post-moves.png");
    if (!failed.isEmpty()) {
      out.println("cells that failed (left out): " + failed);
      return 1;
    }
    return 0;
  }

  /** The baseline row, or null (and a message) if it does not finish in time. */
  private static MulticastBenchmark.Row baselineWithDeadline(Options o, PrintStream out) {
    java.util.concurrent.ExecutorService ex = java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "table1-baseline");
      t.setDaemon(true);
      return t;
    });
    try {
      return ex.submit(() -> baseline(o, out)).get(o.duration() + 120L, TimeUnit.SECONDS);
    } catch (Exception e) {
      out.println("baseline: no result (" + e + ")");
      return null;
    } finally {
      ex.shutdownNow();
    }
  }

  private static MulticastBenchmark.Row baseline(Options o, PrintStream out) throws Exception {
    out.println("baseline: raw Ratis, one group of 3, no-op state machine");
    try (RawRatisBaseline raw = new RawRatisBaseline()) {
      List<org.apache.ratis.client.RaftClient> rc = new ArrayList<>();
      for (int i = 0; i < o.clients(); i++) {
        rc.add(raw.newClient());
      }
      Message msg = Message.valueOf(ByteString.copyFrom(new byte[64]));
      // One blocking request first: the group has elected its leader before the load starts.
      for (org.apache.ratis.client.RaftClient c : rc) {
        c.io().send(msg);
      }
      AtomicInteger rr = new AtomicInteger();
      MulticastBenchmark.Row r = MulticastBenchmark.phase("raw Ratis, no-op SM", 1, o.clients() * o.window(),
          Math.min(o.warmup(), 5), o.duration(),
          () -> raw.send(rc.get(Math.floorMod(rr.getAndIncrement(), rc.size())), msg), () -> "1 log entry per op");
      MulticastBenchmark.closeInBackground(rc);
      out.printf(Locale.ROOT, "    %.0f ops/s, p50 %.1f ms, p99 %.1f ms%n", r.opsPerSec(), r.p50(), r.p99());
      return r;
    }
  }

  /**
   * Runs one cell. Modes: {@code ssmr} and {@code dssmr} with Chirper's oracle (which gathers a
   * user's objects in its community's partition: the application hint of the paper), {@code
   * graph}: DS-SMR with the base oracle's learned placement and no hint
   * ({@link OracleStateMachine.Placement#GRAPH}).
   */
  static Cell cell(Options o, int partitions, Workload w, String modeName, PrintStream out) throws Exception {
    try (Table1Cell c = Table1Cell.start(o, partitions, w, modeName)) {
      c.warm();
      return c.measure(o.seed() + 1);
    }
  }

  /**
   * The modes of one cell side by side: every mode's cluster is started and warmed up, then
   * each is measured {@code o.interleave()} times in alternating windows, in ABBA order (the
   * modes in order, then reversed, and so on) so that a drift of the machine over the run
   * weighs on every mode alike. A cell that is not being measured is idle.
   */
  static Map<String, List<Cell>> interleaved(Options o, int partitions, Workload w, PrintStream out) throws Exception {
    List<Table1Cell> running = new ArrayList<>();
    try {
      for (String mode : o.modes()) {
        running.add(Table1Cell.start(o, partitions, w, mode));
      }
      for (Table1Cell c : running) {
        c.warm();
      }
      Map<String, List<Cell>> byMode = new LinkedHashMap<>();
      for (int round = 0; round < o.interleave(); round++) {
        List<Table1Cell> order = new ArrayList<>(running);
        if (round % 2 == 1) {
          java.util.Collections.reverse(order);
        }
        for (Table1Cell c : order) {
          Cell window = c.measure(o.seed() + 1 + round);
          byMode.computeIfAbsent(c.mode(), k -> new ArrayList<>()).add(window);
          out.printf(Locale.ROOT, "      window %d %s: %.0f cmd/s, p50 %.1f ms%n", round + 1, c.mode(), window.tput(),
              window.p50());
        }
      }
      return byMode;
    } finally {
      running.forEach(Table1Cell::close);
    }
  }

  /**
   * The share of commands that needed several partitions: a move (DS-SMR) or an execution on
   * several partitions at once (S-SMR, or DS-SMR's fallback). A post that learns its author's
   * followers by a retry, with every follower already there, is not one.
   */
  static double multiShare(long multi, long commands) {
    return commands == 0 ? 0 : Math.min(1.0, (double) multi / commands);
  }
}
