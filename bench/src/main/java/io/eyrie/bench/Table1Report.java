package io.eyrie.bench;

import io.eyrie.bench.Table1.Cell;
import io.eyrie.bench.Table1.Options;
import io.eyrie.chirper.LoadRunner;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Table 1's outputs: {@code table1.csv}, {@code table1.md} with the paper's numbers and ratios
 * beside ours, {@code table1-windows.md} for interleaved runs, and the charts.
 */
final class Table1Report {
  private Table1Report() {}

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
                s.commands(), s.moves(), 100 * Table1.multiShare(s.moves() + s.fallbacks(), s.commands())));
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
            c.samples().stream().mapToDouble(s -> 100 * Table1.multiShare(s.moves() + s.fallbacks(), s.commands())).toArray(),
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

