package io.eyrie.chirper;

import io.eyrie.tools.Args;
import io.eyrie.tools.NodeLauncher;
import java.io.PrintStream;
import java.util.Set;

/**
 * {@code chirper node}: one node process of a multi-process cluster, hosting its replicas of the
 * oracle and the partitions with Chirper's server and oracle. Runs until killed; started again on
 * the same storage, it recovers every group from its snapshot and log. It is the node launcher of
 * {@code eyrie node} with {@link ChirperService} and its own default storage directory.
 */
final class NodeCommand implements Subcommand {

  @Override
  public String name() {
    return "node";
  }

  @Override
  public String summary() {
    return "one node process of a real cluster (runs until killed)";
  }

  @Override
  public String usage() {
    return """
        usage: chirper node --cluster FILE --id N [--conf FILE] [--data DIR] [--metrics-port P]
                            [--insecure] [--print-conf]

          --cluster FILE   the cluster file, e.g. conf/chirper-3.conf
          --id N           this node's id in the file
          --data DIR       where the node keeps its Raft logs and snapshots
                           (default data/chirper-node-N); kept across restarts;
                           --storage DIR is another name for it
          --metrics-port P serve /metrics and /ready on this port (default: the
                           node line's metrics=P in the cluster file; none if neither)
          --insecure       start without TLS although the node's address is not loopback
          --conf FILE      the node's tunables, as for eyrie node (conf/node.properties lists them)
          --print-conf     print the effective configuration and exit without starting

        The node runs until it is stopped; on Ctrl-C or kill it first hands the leadership of
        its groups to other nodes (kill -9 is fine too: it recovers from DIR). It is
        `eyrie node --service io.eyrie.chirper.ChirperService`.""";
  }

  @Override
  public Set<String> valued() {
    return NodeLauncher.OPTIONS;
  }

  @Override
  public Set<String> switches() {
    return NodeLauncher.SWITCHES;
  }

  @Override
  public int run(Args a, PrintStream out, PrintStream err) throws Exception {
    return NodeLauncher.run(a, () -> new ChirperService().get(), "data/chirper-node-", out);
  }
}
