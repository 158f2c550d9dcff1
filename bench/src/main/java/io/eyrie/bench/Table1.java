package io.eyrie.bench;

import io.eyrie.oracle.OracleStateMachine;
import io.eyrie.chirper.LoadRunner;
import io.eyrie.chirper.Ops;
import io.eyrie.chirper.Post;
import io.eyrie.chirper.SocialGraph;
import io.eyrie.chirper.Workload;
import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Reply;
import io.eyrie.multicast.testing.RawRatisBaseline;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
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
 */
public final class Table1 {

  /** The paper's Table 1: throughput (commands/s) and latency (ms) per workload and partitions. */
  static final Map<String, double[][]> PAPER = new LinkedHashMap<>();

  static {
    // rows: S-SMR tput, DS-SMR tput, S-SMR latency, DS-SMR latency; columns: 1, 2, 4, 8 partitions
    PAPER.put("timeline", new double[][] {{31757, 60699, 71274, 84065}, {28882, 55925, 57900, 86685},
        {3.1, 6.6, 5.6, 7.0}, {6.9, 7.1, 8.6, 11.4}});
    PAPER.put("post", new double[][] {{32151, 2884, 1894, 1200}, {14874, 23295, 35188, 54250},
        {3.4, 5.2, 7.9, 8.3}, {6.7, 8.6, 11.3, 9.1}});
    PAPER.put("follow", new double[][] {{32541, 11476, 8580, 3371}, {30215, 48976, 54025, 83880},
        {3.0, 5.2, 7.0, 8.8}, {6.6, 6.1, 7.4, 7.0}});
    PAPER.put("mix", new double[][] {{32151, 22803, 16822, 10657}, {27101, 45686, 50671, 74257},
        {3.4, 3.7, 3.8, 7.9}, {7.3, 6.5, 7.8, 7.9}});
  }

  static final int[] PAPER_PARTITIONS = {1, 2, 4, 8};

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
    Map<String, String> m = new HashMap<>();
    for (int i = 0; i < args.length; i++) {
      if (!args[i].startsWith("--")) {
        throw new IllegalArgumentException("expected --option, got " + args[i]);
      }
      String k = args[i].substring(2);
      if (k.equals("no-baseline")) {
        m.put(k, "true");
      } else if (i + 1 < args.length) {
        m.put(k, args[++i]);
      } else {
        throw new IllegalArgumentException("option --" + k + " needs a value");
      }
    }
    List<Integer> parts = new ArrayList<>();
    for (String s : m.getOrDefault("partitions", "1,2,4,8").split(",")) {
      parts.add(Integer.parseInt(s.trim()));
    }
    List<String> ws = new ArrayList<>();
    for (String s : m.getOrDefault("workloads", "timeline,post,follow,mix").split(",")) {
      ws.add(Workload.parse(s.trim()).name().toLowerCase(Locale.ROOT));
    }
    List<String> modes = new ArrayList<>();
    for (String s : m.getOrDefault("modes", "ssmr,dssmr").split(",")) {
      String mode = s.trim().toLowerCase(Locale.ROOT);
      if (!List.of("ssmr", "dssmr", "graph").contains(mode)) {
        throw new IllegalArgumentException("unknown mode " + s + " (ssmr, dssmr or graph)");
      }
      modes.add(mode);
    }
    int duration = Integer.parseInt(m.getOrDefault("duration", "20"));
    int warmup = Integer.parseInt(m.getOrDefault("warmup", "10"));
    return new Options(parts, ws, modes, duration, warmup, Integer.parseInt(m.getOrDefault("post-warmup", String.valueOf(warmup))),
        Integer.parseInt(m.getOrDefault("follow-warmup", String.valueOf(warmup))),
        Integer.parseInt(m.getOrDefault("users", "1000")), Integer.parseInt(m.getOrDefault("follows", "10")),
        Integer.parseInt(m.getOrDefault("communities", "64")), Double.parseDouble(m.getOrDefault("in-community", "1.0")), Integer.parseInt(m.getOrDefault("clients", "4")),
        Integer.parseInt(m.getOrDefault("window", "16")), Long.parseLong(m.getOrDefault("seed", "42")),
        Path.of(m.getOrDefault("out", "bench/results/table1")), !m.containsKey("no-baseline"),
        positive(m.getOrDefault("interleave", "1"), "interleave"));
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
          writeCsv(o.out().resolve("table1.csv"), cells, baseline);
        }
      }
    }
    if (!windows.isEmpty()) {
      writeWindows(o, o.out().resolve("table1-windows.md"), windows);
    }
    writeMarkdown(o, o.out().resolve("table1.md"), cells, baseline);
    writeCharts(o, cells);
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

  /** The partition a user starts in: a hash of its id (independent of its community). */
  static int slot(long user, int partitions) {
    long h = user * 0x9E3779B97F4A7C15L;
    return (int) Math.floorMod(h >>> 32, (long) partitions);
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
   * The interleaved windows: per cell, each round's throughput per mode and, when both S-SMR and
   * DS-SMR ran, each round's ratio DS/S, their mean and their smallest.
   */
  static void writeWindows(Options o, Path file, Map<String, Map<String, List<Cell>>> windows) throws Exception {
    StringBuilder sb = new StringBuilder("# Table 1: interleaved windows\n\n");
    sb.append(String.format(Locale.ROOT, "Each cell's modes ran side by side, each on its own embedded cluster in one JVM;"
        + " after the warm-up each was measured %d times for %d s, in alternating windows (ABBA order).%n%n",
        o.interleave(), o.duration()));
    sb.append("| cell | round |");
    List<String> modes = o.modes();
    modes.forEach(m -> sb.append(' ').append(m).append(" cmd/s |"));
    boolean ratio = modes.contains("ssmr") && modes.contains("dssmr");
    sb.append(ratio ? " DS/S |\n" : "\n").append("|---|---|");
    modes.forEach(m -> sb.append("---|"));
    sb.append(ratio ? "---|\n" : "\n");
    windows.forEach((cell, byMode) -> {
      List<Double> ratios = new ArrayList<>();
      for (int r = 0; r < o.interleave(); r++) {
        sb.append("| ").append(cell).append(" | ").append(r + 1).append(" |");
        for (String m : modes) {
          List<Cell> ws = byMode.get(m);
          sb.append(ws != null && r < ws.size() ? String.format(Locale.ROOT, " %.0f |", ws.get(r).tput()) : " - |");
        }
        if (ratio) {
          List<Cell> s = byMode.get("ssmr");
          List<Cell> d = byMode.get("dssmr");
          double q = d.get(r).tput() / Math.max(1e-9, s.get(r).tput());
          ratios.add(q);
          sb.append(String.format(Locale.ROOT, " %.2f |", q));
        }
        sb.append('\n');
      }
      if (ratio) {
        sb.append(String.format(Locale.ROOT, "| %s | mean / smallest | | | %.2f / %.2f |%n", cell,
            ratios.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN),
            ratios.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN)));
      }
    });
    Files.writeString(file, sb.toString(), StandardCharsets.UTF_8);
  }

  /**
   * The share of commands that needed several partitions: a move (DS-SMR) or an execution on
   * several partitions at once (S-SMR, or DS-SMR's fallback). A post that learns its author's
   * followers by a retry, with every follower already there, is not one.
   */
  static double multiShare(long multi, long commands) {
    return commands == 0 ? 0 : Math.min(1.0, (double) multi / commands);
  }

  /** Bulk-loads the graph: one create per user, with its edges, in its hashed partition. */
  static void seed(SocialGraph g, Client proxy, int partitions) throws Exception {
    int users = g.params().users();
    List<TreeSet<Long>> followers = new ArrayList<>();
    List<TreeSet<Long>> followees = new ArrayList<>();
    for (int u = 0; u < users; u++) {
      followers.add(new TreeSet<>());
      followees.add(new TreeSet<>());
    }
    for (long[] e : g.follows()) {
      followees.get((int) e[0]).add(e[1]);
      followers.get((int) e[1]).add(e[0]);
    }
    List<CompletableFuture<Reply>> inFlight = new ArrayList<>();
    for (int u = 0; u < users; u++) {
      Ops.SeedUser s = new Ops.SeedUser(u, g.community(u), slot(u, partitions),
          followers.get(u).stream().mapToLong(Long::longValue).toArray(),
          followees.get(u).stream().mapToLong(Long::longValue).toArray());
      inFlight.add(proxy.sendCreate(Command.create(ObjId.valueOf(u), s)));
      if (inFlight.size() == 128 || u == users - 1) {
        for (CompletableFuture<Reply> f : inFlight) {
          Reply r = f.get(120, TimeUnit.SECONDS);
          if (!r.isOk()) {
            throw new IllegalStateException("seeding a user failed: " + r.reason());
          }
        }
        inFlight.clear();
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Outputs

  static void writeCsv(Path file, List<Cell> cells, MulticastBenchmark.Row baseline) throws Exception {
    StringBuilder sb = new StringBuilder("workload,partitions,mode,throughput,p50_ms,p99_ms,completed,timeouts,"
        + "moves_per_s,multi_partition_share,log_entries_per_cmd,start_entries_per_cmd,channel_batches_per_cmd,"
        + "channel_items_per_cmd,channel_bytes_per_cmd,cpu_ms_per_cmd,largest_partition_share\n");
    if (baseline != null) {
      sb.append(String.format(Locale.ROOT, "raw-ratis-noop,1,baseline,%.1f,%.2f,%.2f,,%d,0,0,1,1,0,0,0,%.3f,%n",
          baseline.opsPerSec(), baseline.p50(), baseline.p99(), baseline.errors(), baseline.cpuMsPerOp()));
    }
    for (Cell c : cells) {
      sb.append(String.format(Locale.ROOT, "%s,%d,%s,%.1f,%.2f,%.2f,%d,%d,%.2f,%.4f,%.3f,%.3f,%.3f,%.3f,%.1f,%.3f,%.3f%n",
          c.workload(), c.partitions(), c.mode(), c.tput(), c.p50(), c.p99(), c.completed(), c.timeouts(),
          c.movesPerSec(), c.multiShare(), c.logEntries(), c.startEntries(), c.channelBatches(), c.channelItems(),
          c.channelBytes(), c.cpuMsPerCmd(), c.largestShare()));
    }
    Files.writeString(file, sb.toString(), StandardCharsets.UTF_8);
  }

  private static Cell find(List<Cell> cells, String w, int p, String mode) {
    for (Cell c : cells) {
      if (c.workload().equals(w) && c.partitions() == p && c.mode().equals(mode)) {
        return c;
      }
    }
    return null;
  }

  private static int paperColumn(int p) {
    for (int i = 0; i < PAPER_PARTITIONS.length; i++) {
      if (PAPER_PARTITIONS[i] == p) {
        return i;
      }
    }
    return -1;
  }

  static void writeMarkdown(Options o, Path file, List<Cell> cells, MulticastBenchmark.Row baseline) throws Exception {
    StringBuilder sb = new StringBuilder();
    sb.append("# Table 1 on this machine\n\n");
    sb.append(String.format(Locale.ROOT, "Embedded cluster of 3 nodes in one JVM (the oracle and P partitions, 3 replicas"
        + " each), %d users in %d communities with %d follows each (%.0f%% inside the user's community), users start"
        + " in hashed partitions;"
        + " %d clients x %d outstanding; %d s warm-up (Post %d s, Follow/unfollow %d s) then %d s measured per mode;"
        + " seed %d. All partitions"
        + " share this machine's CPUs.%n%n", o.users(), o.communities(), o.follows(), 100 * o.inCommunity(), o.clients(), o.window(),
        o.warmup(), o.postWarmup(), o.followWarmup(), o.duration(), o.seed()));
    StringBuilder head = new StringBuilder("| |");
    StringBuilder sep = new StringBuilder("|---|");
    for (String w : o.workloads()) {
      for (int p : o.partitions()) {
        head.append(' ').append(w).append(' ').append(p).append(" |");
        sep.append("---|");
      }
    }
    sb.append("## Throughput (commands per second)\n\n").append(head).append('\n').append(sep).append('\n');
    row(sb, o, "S-SMR (ours)", (w, p) -> val(find(cells, w, p, "ssmr"), Cell::tput, "%.0f"));
    row(sb, o, "DS-SMR (ours)", (w, p) -> val(find(cells, w, p, "dssmr"), Cell::tput, "%.0f"));
    row(sb, o, "**ratio DS/S (ours)**", (w, p) -> ratio(cells, w, p));
    row(sb, o, "ratio DS/S (paper)", (w, p) -> paper(w, p, 1, 0, true));
    row(sb, o, "S-SMR (paper)", (w, p) -> paper(w, p, 0, -1, false));
    row(sb, o, "DS-SMR (paper)", (w, p) -> paper(w, p, 1, -1, false));
    sb.append("\n## Latency (ms, median; p99 in parentheses)\n\n").append(head).append('\n').append(sep).append('\n');
    row(sb, o, "S-SMR (ours)", (w, p) -> lat(find(cells, w, p, "ssmr")));
    row(sb, o, "DS-SMR (ours)", (w, p) -> lat(find(cells, w, p, "dssmr")));
    row(sb, o, "S-SMR (paper, mean)", (w, p) -> paper(w, p, 2, -1, false));
    row(sb, o, "DS-SMR (paper, mean)", (w, p) -> paper(w, p, 3, -1, false));
    sb.append("\n## Cost per command (measured window)\n\n");
    sb.append("Ratis log entries = client-start entries + channel batches (Ratis requests between groups); items and"
        + " bytes are what groups send each other (values of moved or S-SMR-exchanged objects, verdicts). CPU is the"
        + " process CPU time over the measured window (servers and clients share the JVM) per command.\n\n");
    sb.append("| workload | P | mode | CPU ms | log entries | start entries | channel batches | channel items | channel bytes |"
        + " moves/s | multi-partition | timeouts |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    if (baseline != null) {
      sb.append(String.format(Locale.ROOT, "| raw Ratis, no-op SM (baseline: %.0f ops/s, p50 %.1f ms) | 1 | - | %.2f | 1 | 1 |"
          + " 0 | 0 | 0 | 0 | 0%% | %d |%n", baseline.opsPerSec(), baseline.p50(), baseline.cpuMsPerOp(), baseline.errors()));
    }
    for (Cell c : cells) {
      sb.append(String.format(Locale.ROOT, "| %s | %d | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.0f | %.1f | %.1f%% | %d |%n",
          c.workload(), c.partitions(), c.mode(), c.cpuMsPerCmd(), c.logEntries(), c.startEntries(), c.channelBatches(),
          c.channelItems(), c.channelBytes(), c.movesPerSec(), 100 * c.multiShare(), c.timeouts()));
    }
    List<Cell> post = cells.stream().filter(c -> c.workload().equals("post") && c.mode().equals("dssmr")).toList();
    if (!post.isEmpty()) {
      sb.append("\n## Post under DS-SMR over time (per second: moves, and (moves + fallbacks) / commands)\n\n");
      sb.append("| P | second | commands | moves | multi-partition |\n|---|---|---|---|---|\n");
      for (Cell c : post) {
        for (LoadRunner.Sample s : c.samples()) {
          if (s.second() % 10 == 0 || s.second() == c.samples().size()) {
            sb.append(String.format(Locale.ROOT, "| %d | %d | %d | %d | %.1f%% |%n", c.partitions(), s.second(),
                s.commands(), s.moves(), 100 * multiShare(s.moves() + s.fallbacks(), s.commands())));
          }
        }
      }
    }
    Files.writeString(file, sb.toString(), StandardCharsets.UTF_8);
  }

  private interface CellText {
    String at(String workload, int partitions);
  }

  private static void row(StringBuilder sb, Options o, String name, CellText f) {
    sb.append("| ").append(name).append(" |");
    for (String w : o.workloads()) {
      for (int p : o.partitions()) {
        sb.append(' ').append(f.at(w, p)).append(" |");
      }
    }
    sb.append('\n');
  }

  private static String val(Cell c, java.util.function.ToDoubleFunction<Cell> f, String fmt) {
    return c == null ? "-" : String.format(Locale.ROOT, fmt, f.applyAsDouble(c));
  }

  private static String lat(Cell c) {
    return c == null ? "-" : String.format(Locale.ROOT, "%.0f (%.0f)", c.p50(), c.p99());
  }

  static String ratio(List<Cell> cells, String w, int p) {
    Cell s = find(cells, w, p, "ssmr");
    Cell d = find(cells, w, p, "dssmr");
    if (s == null || d == null || s.tput() <= 0) {
      return "-";
    }
    return String.format(Locale.ROOT, "**%.2f**", d.tput() / s.tput());
  }

  private static String paper(String w, int p, int row, int divisorRow, boolean bold) {
    double[][] t = PAPER.get(w);
    int col = paperColumn(p);
    if (t == null || col < 0) {
      return "-";
    }
    if (divisorRow >= 0) {
      return String.format(Locale.ROOT, "%.2f", t[row][col] / t[divisorRow][col]);
    }
    return String.format(Locale.ROOT, row >= 2 ? "%.1f" : "%.0f", t[row][col]);
  }

  static void writeCharts(Options o, List<Cell> cells) throws Exception {
    List<LineChart.Panel> panels = new ArrayList<>();
    for (String w : o.workloads()) {
      List<LineChart.Series> series = new ArrayList<>();
      int color = 0;
      for (String mode : new String[] {"ssmr", "dssmr"}) {
        List<Cell> cs = new ArrayList<>();
        for (int p : o.partitions()) {
          Cell c = find(cells, w, p, mode);
          if (c != null) {
            cs.add(c);
          }
        }
        series.add(new LineChart.Series(mode.equals("ssmr") ? "S-SMR" : "DS-SMR",
            cs.stream().mapToDouble(Cell::partitions).toArray(), cs.stream().mapToDouble(Cell::tput).toArray(), color++));
      }
      panels.add(new LineChart.Panel(w, "partitions", "commands/s", series, true));
    }
    LineChart.write(o.out().resolve("table1-throughput.png"), "Chirper throughput by partitions (cf. the paper's Figure 4)",
        panels);
    List<LineChart.Series> moves = new ArrayList<>();
    List<LineChart.Series> multi = new ArrayList<>();
    int color = 0;
    for (Cell c : cells) {
      if (c.workload().equals("post") && c.mode().equals("dssmr")) {
        double[] x = c.samples().stream().mapToDouble(LoadRunner.Sample::second).toArray();
        moves.add(new LineChart.Series(c.partitions() + "P", x,
            c.samples().stream().mapToDouble(LoadRunner.Sample::moves).toArray(), color));
        multi.add(new LineChart.Series(c.partitions() + "P", x,
            c.samples().stream().mapToDouble(s -> 100 * multiShare(s.moves() + s.fallbacks(), s.commands())).toArray(),
            color));
        color++;
      }
    }
    if (!moves.isEmpty()) {
      LineChart.write(o.out().resolve("table1-post-moves.png"), "Post under DS-SMR: moves and multi-partition commands over time",
          List.of(new LineChart.Panel("move rate", "seconds since the load started", "moves/s", moves, false),
              new LineChart.Panel("multi-partition share", "seconds since the load started", "% of commands", multi, false)));
    }
  }
}
