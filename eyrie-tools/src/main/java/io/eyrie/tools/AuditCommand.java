package io.eyrie.tools;

import io.eyrie.core.AuditReport;
import io.eyrie.core.Client;
import io.eyrie.multicast.ClusterConfig;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/** {@code eyrie audit}: the oracle's map against the partitions' contents ({@link Client#audit()}). */
final class AuditCommand implements Command {

  @Override
  public String name() {
    return "audit";
  }

  @Override
  public String summary() {
    return "checks the oracle's map against what the partitions hold";
  }

  @Override
  public String usage() {
    return """
        usage: eyrie audit --cluster FILE [--timeout 10s] [--as NAME]

          --cluster FILE   the cluster file
          --timeout D      how long to wait for the answers (default 10s)
        """ + Tools.AS_USAGE + """

        Run it when no command is in flight: a move in progress shows up as a missing object.
        Exit code 0 if the map and the partitions agree, 1 if not.""";
  }

  @Override
  public Set<String> valued() {
    return Set.of("cluster", "timeout", Tools.AS);
  }

  @Override
  public int run(Args a, PrintStream out, PrintStream err) throws Exception {
    a.noPositional();
    ClusterConfig cluster = Tools.cluster(a);
    if (cluster.oracle() == null) {
      throw new Args.UsageException("the cluster file has no oracle group");
    }
    long timeoutMs = a.duration("timeout", Duration.ofSeconds(10), Duration.ofMillis(100)).toMillis();
    // Partitions added to the running cluster are audited too: the nodes know them. A client
    // without a service: the audit needs Eyrie's own messages only.
    io.eyrie.multicast.TlsConfig tls = Tools.tls(a, cluster);
    try (Client client = Client.newBuilder().cluster(Tools.view(cluster, tls, Math.min(timeoutMs, 10_000)))
        .tls(tls).totalTimeoutMs(timeoutMs).build()) {
      AuditReport r = client.audit().get(timeoutMs + 1000, TimeUnit.MILLISECONDS);
      out.println("objects in the oracle's map: " + r.objects());
      out.println("objects per partition: " + r.perPartition());
      line(out, "missing", r.missing());
      line(out, "duplicated", r.duplicated());
      line(out, "misplaced", r.misplaced());
      line(out, "unknown to the oracle", r.unknown());
      out.println(r.clean() ? "clean" : "NOT clean");
      return r.clean() ? 0 : 1;
    }
  }

  private static void line(PrintStream out, String what, List<?> ids) {
    if (!ids.isEmpty()) {
      out.println(what + " (" + ids.size() + "): " + (ids.size() > 20 ? ids.subList(0, 20) + " ..." : ids));
    }
  }
}
