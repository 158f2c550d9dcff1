package io.eyrie.chirper;

import io.eyrie.multicast.ClusterConfig;
import io.eyrie.tools.Args;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;

/**
 * {@code chirper load}: the load generator of the paper's §6.1 against a running cluster, with
 * the demo's progress line and summary.
 */
final class LoadCommand implements Subcommand {

  @Override
  public String name() {
    return "load";
  }

  @Override
  public String summary() {
    return "closed-loop load (paper §6.1) against a running cluster; prints a summary";
  }

  @Override
  public String usage() {
    return """
        usage: chirper load --cluster FILE [OPTIONS]

        Loads the social graph into the cluster (users that exist already and follows that are
        already there are left alone, so running it again is fine), then runs the workload with
        closed-loop clients and prints the same summary as the demo.

          --cluster FILE   the cluster file (required), e.g. conf/chirper-3.conf
          --no-setup       do not create users and follows (the graph of the same --users,
                           --follows, --communities and --seed must be there already)
          --out DIR        also write a chart and the time series there
          --resend-log FILE  write a line per resent call (time, message id, node, attempts,
                           reason: attempt_timeout, connection or unavailable), to see what
                           the slowest commands waited for, e.g. in a failover
        """ + LoadSession.USAGE + """

        Example: chirper load --cluster conf/chirper-3.conf --workload mix --mode dssmr --clients 4 --duration 20""";
  }

  @Override
  public Set<String> valued() {
    return LoadSession.optionsWith("cluster", "resend-log");
  }

  @Override
  public Set<String> switches() {
    return Set.of("no-setup");
  }

  @Override
  public int run(Args a, PrintStream out, PrintStream err) throws Exception {
    a.noPositional();
    ClusterConfig cluster = SingleCommand.cluster(a);
    LoadSession.Options o = LoadSession.options(a, cluster.partitions().size(), 1000, 10, Duration.ofSeconds(30));
    LoadSession.Report r;
    try (ResendLog resends = a.has("resend-log") ? new ResendLog(Path.of(a.string("resend-log", null))) : null) {
      r = LoadSession.run(cluster, o, out, ProgressLine.stdoutIsTerminal() && out == System.out, resends);
    }
    LoadSession.report(r, a.has("out") ? Path.of(a.string("out", null)) : null, "chirper-load", out);
    if (r.result().errors() > 0) {
      err.println("chirper load: " + r.result().errors() + " commands failed, e.g. " + r.result().errorExamples());
      return 1;
    }
    return 0;
  }
}
