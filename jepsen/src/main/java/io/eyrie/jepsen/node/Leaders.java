package io.eyrie.jepsen.node;

import io.eyrie.multicast.ClusterAdmin;
import io.eyrie.multicast.ClusterConfig;
import java.util.Map;

/** The harness's leader query (its nemeses kill, pause and isolate leaders): {@link ClusterAdmin#leaders}. */
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
}
