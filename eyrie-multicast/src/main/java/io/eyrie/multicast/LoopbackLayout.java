package io.eyrie.multicast;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

/**
 * The cluster an {@link EmbeddedCluster} runs: its nodes on free loopback ports (a Raft and a
 * client port each), an optional oracle group and partition groups p0, p1, ..., each on
 * {@code replication} nodes spread round-robin.
 */
final class LoopbackLayout {
  private LoopbackLayout() {}

  /**
   * Lays out a cluster.
   *
   * @param nodes how many nodes, numbered from 1
   * @param partitions how many partition groups
   * @param oracle whether there is an oracle group, named "oracle"
   * @param replication replicas per group; 0 or less for every node
   * @return the cluster, its ports free when this returns
   * @throws IOException if no free ports can be found
   */
  static ClusterConfig of(int nodes, int partitions, boolean oracle, int replication) throws IOException {
    int r = replication <= 0 ? nodes : Math.min(replication, nodes);
    ClusterConfig.Builder cb = ClusterConfig.newBuilder();
    try (PortBlock ports = new PortBlock(2 * nodes)) {
      for (int i = 1; i <= nodes; i++) {
        cb.node(i, "127.0.0.1", ports.port(2 * (i - 1)), ports.port(2 * (i - 1) + 1));
      }
    }
    List<String> names = new ArrayList<>();
    if (oracle) {
      names.add("oracle");
    }
    for (int p = 0; p < partitions; p++) {
      names.add("p" + p);
    }
    for (int gi = 0; gi < names.size(); gi++) {
      List<Integer> members = new ArrayList<>();
      for (int k = 0; k < r; k++) {
        members.add((gi + k) % nodes + 1);
      }
      cb.group(GroupId.valueOf(names.get(gi)),
          names.get(gi).equals("oracle") ? ClusterConfig.Kind.ORACLE : ClusterConfig.Kind.PARTITION, members);
    }
    return cb.build();
  }

  /** Free loopback ports, found by binding and releasing. */
  private static final class PortBlock implements AutoCloseable {
    private final List<ServerSocket> sockets = new ArrayList<>();

    PortBlock(int n) throws IOException {
      for (int i = 0; i < n; i++) {
        ServerSocket s = new ServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress("127.0.0.1", 0));
        sockets.add(s);
      }
    }

    int port(int i) {
      return sockets.get(i).getLocalPort();
    }

    @Override
    public void close() throws IOException {
      for (ServerSocket s : sockets) {
        s.close();
      }
    }
  }
}
