package io.eyrie.chirper;

import io.eyrie.core.Service;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.MulticastException;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.TlsConfig;
import io.eyrie.tools.Args;
import io.eyrie.tools.DevCertificates;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * {@code chirper demo}: the main job. An embedded cluster in this JVM, the social graph, a
 * workload for a fixed time with a live progress line, then the summary table and a chart.
 */
final class DemoCommand implements Subcommand {

  @Override
  public String name() {
    return "demo";
  }

  @Override
  public String summary() {
    return "embedded cluster + social graph + workload; prints a summary, writes a chart";
  }

  @Override
  public String usage() {
    return """
        usage: chirper demo [OPTIONS]

        Starts an embedded cluster (NODES nodes; an oracle and PARTITIONS partitions, each a Raft
        group with a replica on every node), creates the social graph, runs the workload for the
        given time with a progress line per second, prints a summary table and writes a PNG chart
        of throughput and move rate over time (plus the time series as CSV).

          --nodes N        nodes, i.e. replicas per group (default 3)
          --partitions N   partitions besides the oracle (default 4)
          --out DIR        where the chart goes (default target/chirper-demo)
          --placement P    where the oracle gathers a command's users: community (Chirper's
                           oracle, which knows each user's community; default) or graph (the
                           base oracle's learned placement, no hint)
          --tls            mutual TLS on every node's client and Raft ports, with a development
                           CA and certificates written into a temporary directory (as eyrie certs
                           does; removed at exit): the clients connect as client "chirper", and
                           the demo first shows a client without a certificate refused
        """ + LoadSession.USAGE + """

        Example: chirper demo --duration 10 --users 500 --mode ssmr""";
  }

  @Override
  public Set<String> valued() {
    return LoadSession.optionsWith("nodes", "partitions", "placement");
  }

  @Override
  public Set<String> switches() {
    return Set.of("tls");
  }

  @Override
  public int run(Args a, PrintStream out, PrintStream err) throws Exception {
    a.noPositional();
    int nodes = a.integer("nodes", 3, 1, 9);
    int partitions = a.integer("partitions", 4, 1, 64);
    LoadSession.Options o = LoadSession.options(a, partitions, 200, 5, Duration.ofSeconds(20));
    Path dir = Path.of(a.string("out", "target/chirper-demo"));
    String placement = a.choice("placement", "community", "community", "graph");
    Service service = placement.equals("graph") ? ChirperService.withLearnedPlacement() : new ChirperService().get();
    out.printf(Locale.ROOT, "Chirper demo: %d nodes, oracle + %d partitions (replication %d), %d users, %s workload,"
        + " %s (%s placement), %d s, seed %d%n", nodes, partitions, nodes, o.users(), o.workload().label(), o.modeLabel(),
        placement,
        o.duration().toSeconds(), o.seed());
    Path certs = null;
    TlsConfig clientTls = null;
    if (a.flag("tls")) {
      certs = Files.createTempDirectory("chirper-demo-certs-");
      List<String> ids = new ArrayList<>();
      for (int i = 1; i <= nodes; i++) {
        ids.add(String.valueOf(i));
      }
      DevCertificates.write(certs, ids, List.of(), List.of(), List.of(CLIENT));
      clientTls = TlsConfig.fromDir(certs, "client-" + CLIENT);
      out.printf(Locale.ROOT, "tls: mutual TLS on the client and Raft ports; a development CA and certificates in %s"
          + " (removed at exit); the clients connect as %s%n", certs, clientTls.identity());
    }
    try {
      return run(a, out, err, nodes, partitions, o, dir, placement, service, certs, clientTls);
    } finally {
      if (certs != null) {
        delete(certs);
      }
    }
  }

  /** The client identity of {@code --tls}. */
  private static final String CLIENT = "chirper";

  private int run(Args a, PrintStream out, PrintStream err, int nodes, int partitions, LoadSession.Options o,
      Path dir, String placement, Service service, Path certs, TlsConfig clientTls) throws Exception {
    long t0 = System.nanoTime();
    try (EmbeddedCluster cluster = EmbeddedCluster.newBuilder().nodes(nodes).partitions(partitions).oracle(true)
        .app(service).tls(certs).start()) {
      out.printf(Locale.ROOT, "cluster: up in %.1f s, groups %s%n", (System.nanoTime() - t0) / 1e9,
          cluster.cluster().groupIds());
      if (clientTls != null && !plaintextRefused(cluster, service, out, err)) {
        return 1;
      }
      LoadSession.Report r;
      // With the learned placement, its background rebalancer (64 objects a second) on a client of its own.
      io.eyrie.core.Client mover = placement.equals("graph") ? io.eyrie.core.Client.newBuilder()
          .cluster(cluster.cluster()).service(service).tls(clientTls).build() : null;
      try (StuckCallProbe probe = new StuckCallProbe(cluster, dir);
          AutoCloseable moverClosed = mover;
          AutoCloseable rebalancer = mover == null ? null
              : io.eyrie.core.Rebalancer.start(mover, Duration.ofSeconds(1), 64)) {
        try {
          r = LoadSession.run(cluster.cluster(), o, out, ProgressLine.stdoutIsTerminal() && out == System.out, probe,
              clientTls);
          if (!r.result().timeoutExamples().isEmpty()) {
            err.println("chirper demo: " + r.result().timeouts() + " commands timed out; the first:");
            report(probe, StuckCallProbe.timedOut(r.result().timeoutExamples().get(0)), err);
          }
        } catch (Exception e) {
          dumpState(cluster, dir, err);
          report(probe, StuckCallProbe.timedOut(e), err);
          throw e;
        }
      }
      LoadSession.report(r, dir, "chirper-demo", out);
      if (r.result().errors() > 0) {
        dumpState(cluster, dir, err);
        err.println("chirper demo: " + r.result().errors() + " commands failed, e.g. " + r.result().errorExamples());
        return 1;
      }
      return 0;
    }
  }

  /**
   * With TLS, shows that a client without a certificate gets nowhere: its first request fails
   * FORBIDDEN with the node's "requires mutual TLS". Returns false (and says why) otherwise.
   */
  private static boolean plaintextRefused(EmbeddedCluster cluster, Service service, PrintStream out,
      PrintStream err) {
    try (io.eyrie.core.Client plain = io.eyrie.core.Client.newBuilder().cluster(cluster.cluster()).service(service)
        .totalTimeoutMs(10_000).build()) {
      plain.partitionStats(cluster.cluster().partitions().get(0)).get(20, TimeUnit.SECONDS);
      err.println("chirper demo: with --tls, a client without a certificate was served");
      return false;
    } catch (ExecutionException e) {
      if (e.getCause() instanceof MulticastException m && m.status() == Status.FORBIDDEN) {
        out.println("tls: a client without a certificate is refused: " + m.getMessage());
        return true;
      }
      err.println("chirper demo: with --tls, a client without a certificate failed otherwise: " + e.getCause());
      return false;
    } catch (Exception e) {
      err.println("chirper demo: with --tls, the plaintext check failed: " + e);
      return false;
    }
  }

  /** Deletes the certificates' directory (its keys included). */
  private static void delete(Path certs) {
    try (java.util.stream.Stream<Path> s = Files.walk(certs)) {
      s.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException e) {
      // best effort: it is a temporary directory
    }
  }

  /** Prints what the replicas knew of a timed-out multicast when it got stuck, and know now. */
  private static void report(StuckCallProbe probe, io.eyrie.multicast.MsgId id, PrintStream err) {
    if (id == null) {
      return;
    }
    String then = probe.snapshot(id);
    err.print(then != null ? then : "(" + id + " was never resent)\n");
    err.print("now:\n" + probe.describe(id));
  }

  /** Writes every node's progress (what a stuck command waits for) next to the chart. */
  private static void dumpState(EmbeddedCluster cluster, Path dir, PrintStream err) {
    try {
      java.nio.file.Files.createDirectories(dir);
      Path f = dir.resolve("cluster-state.txt");
      java.nio.file.Files.writeString(f, cluster.describe());
      err.println("chirper demo: the cluster's state is in " + f);
    } catch (java.io.IOException | RuntimeException e) {
      err.println("chirper demo: cannot write the cluster's state: " + e);
    }
  }
}
