package io.eyrie.chirper;

import io.eyrie.core.ClientStats;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The end-of-run table of the demo and the load generator. */
final class Summary {
  private Summary() {}

  /**
   * Describes the run in the table's title.
   *
   * @param mode dssmr or ssmr
   * @param workload the mix
   * @param partitions number of partitions
   * @param users number of users
   * @param clients number of client proxies
   * @param window commands outstanding per client
   */
  record Setting(String mode, Workload workload, int partitions, int users, int clients, int window) {}

  static void print(PrintStream out, Setting s, LoadRunner.Result r) {
    ClientStats st = r.stats();
    double secs = r.window().toMillis() / 1000.0;
    double[] q = r.latencies().quantilesMs(0.5, 0.99, 1.0);
    List<String[]> rows = new ArrayList<>();
    rows.add(row("throughput", fmt("%.1f cmd/s", r.throughput()),
        fmt("%d commands in %.1f s", r.completedInWindow(), secs)));
    rows.add(row("latency p50", fmt("%.2f ms", q[0]), ""));
    rows.add(row("latency p99", fmt("%.2f ms", q[1]), fmt("max %.1f ms", q[2])));
    rows.add(row("p50 / p99 by command", "", byKind(r)));
    rows.add(row("moves", Long.toString(st.moves()),
        fmt("%.1f/s; %d objects moved", st.moves() / secs, st.movedObjects())));
    rows.add(row("move rate first/last 5 s", fmt("%.1f / %.1f per s", moveRate(r, true), moveRate(r, false)),
        "objects used together settle in one partition"));
    rows.add(row("retries", Long.toString(st.retries()), "stale location or missing followers"));
    rows.add(row("fallbacks", Long.toString(st.fallbacks()), "commands executed with S-SMR on all partitions"));
    rows.add(row("single-partition share", fmt("%.1f %%", 100 * st.directShare()),
        fmt("%d of %d ran in one partition at once, no move", st.direct(), st.commands())));
    rows.add(row("reads off the log", Long.toString(st.reads()), "timelines a partition's leader served without a log entry"));
    rows.add(row("multi-partition (S-SMR)", Long.toString(st.multiPartition()), "executions on several partitions"));
    rows.add(row("oracle consults", Long.toString(st.consults()), fmt("cache hits %d", st.cacheHits())));
    rows.add(row("timeouts", Long.toString(r.timeouts()), "outcome unknown (no answer in time)"));
    rows.add(row("errors", Long.toString(r.errors()), r.errorExamples().isEmpty() ? "" : r.errorExamples().get(0)));
    if (r.unfinished() > 0) {
      rows.add(row("unfinished", Long.toString(r.unfinished()), "still outstanding after the drain"));
    }
    rows.add(row("command mix", "", mix(r)));

    out.printf(Locale.ROOT, "%nChirper summary: %s, %s workload, %d partitions, %d users, %d clients x window %d%n",
        s.mode(), s.workload().label(), s.partitions(), s.users(), s.clients(), s.window());
    table(out, rows);
  }

  private static double moveRate(LoadRunner.Result r, boolean first) {
    List<LoadRunner.Sample> ss = r.samples();
    int n = Math.min(5, ss.size());
    if (n == 0) {
      return 0;
    }
    List<LoadRunner.Sample> part = first ? ss.subList(0, n) : ss.subList(ss.size() - n, ss.size());
    return part.stream().mapToLong(LoadRunner.Sample::moves).sum() / (double) n;
  }

  private static String byKind(LoadRunner.Result r) {
    StringBuilder sb = new StringBuilder();
    for (Workload.Kind k : Workload.Kind.values()) {
      Latencies l = r.kindLatencies()[k.ordinal()];
      if (l.size() > 0) {
        double[] q = l.quantilesMs(0.5, 0.99);
        sb.append(sb.length() == 0 ? "" : "  ").append(fmt("%s %.0f / %.0f ms", k.label(), q[0], q[1]));
      }
    }
    return sb.toString();
  }

  private static String mix(LoadRunner.Result r) {
    long total = 0;
    for (long k : r.perKind()) {
      total += k;
    }
    StringBuilder sb = new StringBuilder();
    for (Workload.Kind k : Workload.Kind.values()) {
      double share = total == 0 ? 0 : 100.0 * r.perKind()[k.ordinal()] / total;
      sb.append(sb.length() == 0 ? "" : "  ").append(fmt("%s %.1f%%", k.label(), share));
    }
    return sb.toString();
  }

  private static String[] row(String metric, String value, String note) {
    return new String[] {metric, value, note};
  }

  /** Prints rows as a table with a header and aligned columns. */
  static void table(PrintStream out, List<String[]> rows) {
    String[] header = {"metric", "value", "note"};
    int[] w = new int[header.length];
    for (int i = 0; i < w.length; i++) {
      w[i] = header[i].length();
      for (String[] r : rows) {
        w[i] = Math.max(w[i], r[i].length());
      }
    }
    String rule = "-".repeat(w[0] + 2) + "+" + "-".repeat(w[1] + 2) + "+" + "-".repeat(w[2] + 2);
    out.println(line(header, w));
    out.println(rule);
    for (String[] r : rows) {
      out.println(line(r, w));
    }
  }

  private static String line(String[] cells, int[] w) {
    String s = " " + pad(cells[0], w[0]) + " | " + padLeft(cells[1], w[1]) + " | " + cells[2];
    return s.stripTrailing();
  }

  private static String pad(String s, int w) {
    return s + " ".repeat(w - s.length());
  }

  private static String padLeft(String s, int w) {
    return " ".repeat(w - s.length()) + s;
  }

  private static String fmt(String f, Object... args) {
    return String.format(Locale.ROOT, f, args);
  }
}
