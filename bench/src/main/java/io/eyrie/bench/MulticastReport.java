package io.eyrie.bench;

import io.eyrie.bench.MulticastBenchmark.Row;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/**
 * The multicast benchmark's results: {@code multicast.csv} and {@code multicast.md} (the table of
 * rows and the ratios against the targets), also printed; with a Raft transport or TLS other than
 * the defaults the files are named after them ({@code multicast-grpc-tls.md}), so that the four
 * runs of issue 28 can share one {@code --out}, and the markdown names both in its first lines.
 */
final class MulticastReport {
  private MulticastReport() {}

  /**
   * The files' name, without extension: {@code multicast} for the defaults (Netty, no TLS), else
   * {@code multicast-TRANSPORT[-tls]}.
   */
  static String fileName(io.eyrie.multicast.NodeOptions.RaftTransport transport, boolean tls) {
    if (transport == io.eyrie.multicast.NodeOptions.RAFT_TRANSPORT_DEFAULT && !tls) {
      return "multicast";
    }
    return "multicast-" + transport.label() + (tls ? "-tls" : "");
  }

  /** Writes the rows of one run to {@code dir/NAME.{csv,md}} ({@link #fileName}) and prints the markdown. */
  static void write(Path dir, List<Row> rows, int clients, int window, int warmup, int duration,
      io.eyrie.multicast.NodeOptions.RaftTransport transport, boolean tls) throws IOException {
    Files.createDirectories(dir);
    String name = fileName(transport, tls);
    StringBuilder csv = new StringBuilder("name,groups,ops_per_sec,p50_ms,p99_ms,errors,cpu_ms_per_op,log_entries_per_op,cost\n");
    StringBuilder md = new StringBuilder("# Multicast benchmark\n\n");
    md.append("Run ").append(Instant.now()).append(" on ").append(Runtime.getRuntime().availableProcessors())
        .append(" cores (everything, clients included, shares them). ")
        .append(String.format(Locale.ROOT, "%d clients x %d outstanding, %d s warm-up, %d s measured, 64-byte payloads; ",
            clients, window, warmup, duration))
        .append("embedded cluster of 3 nodes, 4 partition groups of 3 replicas, echo deliverers; Raft transport **")
        .append(transport.label()).append("**, TLS **").append(tls ? "on" : "off").append("**")
        .append(rows.stream().anyMatch(r -> r.name().startsWith("transfers")) ? "; the DS-SMR rows go through the public "
            + "client on a bank cluster (the oracle and 4 partitions), see DssmrOpsBenchmark.\n\n" : ".\n\n")
        .append("CPU per op is the process CPU time (servers and clients: one JVM) over the measured window divided by ")
        .append("the operations completed in it; log entries per op counts Ratis log entries (client-start entries plus ")
        .append("channel batches; one per op for raw Ratis; not counted for DS-SMR).\n\n")
        .append("| path | groups | ops/s | p50 ms | p99 ms | errors | CPU ms/op | log entries/op | cost per op |\n")
        .append("|---|---|---|---|---|---|---|---|---|\n");
    double raw = rows.get(0).opsPerSec();
    boolean hasRaw = rows.get(0).name().startsWith("raw");
    for (Row r : rows) {
      csv.append(String.format(Locale.ROOT, "%s,%d,%.0f,%.3f,%.3f,%d,%.3f,%.3f,\"%s\"%n", r.name(), r.groups(),
          r.opsPerSec(), r.p50(), r.p99(), r.errors(), r.cpuMsPerOp(), r.entriesPerOp(), r.cost()));
      md.append(String.format(Locale.ROOT, "| %s | %d | %.0f | %.2f | %.2f | %d | %s | %s | %s |%n", r.name(), r.groups(),
          r.opsPerSec(), r.p50(), r.p99(), r.errors(), fmt(r.cpuMsPerOp(), "%.2f"), fmt(r.entriesPerOp(), "%.3f"),
          r.cost()));
    }
    Row m1 = find(rows, "multicast", 1);
    Row m2 = find(rows, "multicast", 2);
    Row m4 = find(rows, "multicast", 4);
    if (m1 != null && m2 != null && m4 != null) {
      md.append(String.format(Locale.ROOT, "%nMulti-group / 1-group multicast in this run: throughput 2 groups **%.2f** "
          + "(target at least 0.45), 4 groups **%.2f** (target at least 0.22); CPU per op 2 groups **%.2fx** (target at "
          + "most 2.2x); log entries per 2-group op **%.3f** (target at most 0.5).%n", m2.opsPerSec() / m1.opsPerSec(),
          m4.opsPerSec() / m1.opsPerSec(), m2.cpuMsPerOp() / m1.cpuMsPerOp(), m2.entriesPerOp()));
    }
    Row i1 = find(rows, "isolated multicast (one at a time)", 1);
    Row i4 = find(rows, "isolated multicast (one at a time)", 4);
    if (i1 != null && i4 != null) {
      md.append(String.format(Locale.ROOT, "%nIsolated latency p50, 4 groups / 1 group: **%.2fx** (target at most 3x).%n",
          i4.p50() / i1.p50()));
    }
    if (hasRaw && rows.size() > 1) {
      md.append(String.format(Locale.ROOT, "%nOne-group multicast / raw Ratis throughput: **%.2f** (target at least 0.70).%n",
          rows.get(1).opsPerSec() / raw));
    }
    Files.writeString(dir.resolve(name + ".csv"), csv, StandardCharsets.UTF_8);
    Files.writeString(dir.resolve(name + ".md"), md, StandardCharsets.UTF_8);
    System.out.println("wrote " + dir.resolve(name + ".md") + " and .csv");
    System.out.println();
    System.out.println(md);
  }

  private static Row find(List<Row> rows, String name, int groups) {
    for (Row r : rows) {
      if (r.name().equals(name) && r.groups() == groups) {
        return r;
      }
    }
    return null;
  }

  private static String fmt(double v, String f) {
    return Double.isNaN(v) ? "" : String.format(Locale.ROOT, f, v);
  }
}
