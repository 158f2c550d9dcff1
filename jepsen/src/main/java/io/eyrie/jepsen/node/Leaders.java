package io.eyrie.jepsen.node;

import io.eyrie.multicast.ClusterAdmin;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.TlsConfig;
import java.util.Map;

/**
 * The harness's leader query (its nemeses kill, pause and isolate leaders): {@link ClusterAdmin#leaders}.
 * Netty-only: it asks the Raft ports over Eyrie's Netty RPC, the transport the harness's nodes run
 * (the default {@code raft.transport}); nodes on gRPC would answer it nothing ({@link
 * ClusterAdmin#leaders(ClusterConfig, long, TlsConfig, io.eyrie.multicast.NodeOptions.RaftTransport)} asks them).
 */
public final class Leaders {
  private Leaders() {}

  /**
   * Returns group name to leader node id (0 when no member says it leads).
   *
   * @param cluster the cluster
   * @param timeoutMs how long to wait for each server
   * @return the leaders, by group name
   */
  public static Map<String, Integer> of(ClusterConfig cluster, long timeoutMs) {
    return ClusterAdmin.leaders(cluster, timeoutMs);
  }

  /**
   * As {@link #of(ClusterConfig, long)}, over mutual TLS as {@code tls}'s identity (a node's, as
   * the Raft ports take only nodes; the harness's {@code --tls}).
   *
   * @param cluster the cluster
   * @param timeoutMs how long to wait for each server
   * @param tls the identity to ask as, or null for plaintext
   * @return the leaders, by group name
   */
  public static Map<String, Integer> of(ClusterConfig cluster, long timeoutMs, TlsConfig tls) {
    return ClusterAdmin.leaders(cluster, timeoutMs, tls);
  }
}
