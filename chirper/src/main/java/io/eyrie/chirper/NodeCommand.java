package io.eyrie.chirper;

import io.eyrie.multicast.ClusterConfig;
import io.eyrie.tools.Args;
import io.eyrie.tools.NodeLauncher;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Set;

/**
 * {@code chirper node}: one node process of a multi-process cluster, hosting its replicas of the
 * oracle and the partitions with Chirper's server and oracle. Runs until killed; started again on
 * the same storage, it recovers every group from its snapshot and log.
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
        usage: chirper node --cluster FILE --id N [--data DIR] [--metrics-port P]

          --cluster FILE   the cluster file, e.g. conf/chirper-3.conf
          --id N           this node's id in the file
          --data DIR       where the node keeps its Raft logs and snapshots
                           (default data/chirper-node-N); kept across restarts;
                           --storage DIR is another name for it
          --metrics-port P serve /metrics and /ready on this port (default: the
                           node line's metrics=P in the cluster file; none if neither)

        The node runs until it is stopped; on Ctrl-C or kill it first hands the leadership of
        its groups to other nodes (kill -9 is fine too: it recovers from DIR). It is
        `eyrie node --service io.eyrie.chirper.ChirperService`.""";
  }

  @Override
  public Set<String> valued() {
    return Set.of("cluster", "id", "data", "metrics-port");
  }

  @Override
  public int run(Args a, PrintStream out, PrintStream err) throws Exception {
    if (!a.positional().isEmpty()) {
      throw new Args.UsageException("unexpected argument '" + a.positional().get(0) + "'");
    }
    ClusterConfig cluster = SingleCommand.cluster(a);
    int id = a.integer("id", -1, 1, Integer.MAX_VALUE);
    if (id < 0) {
      throw new Args.UsageException("option --id is required");
    }
    if (!cluster.nodes().containsKey(id)) {
      throw new Args.UsageException("the cluster file has no node " + id + " (nodes " + cluster.nodes().keySet() + ")");
    }
    Path storage = Path.of(a.string("data", "data/chirper-node-" + id)).toAbsolutePath().normalize();
    int port = a.integer("metrics-port", cluster.metricsPort(id), 0, 65535);
    NodeLauncher.start(cluster, id, storage, new ChirperService().get(), port, out).awaitClose();
    return 0;
  }
}
