package io.eyrie.multicast;

import java.util.Map;
import java.util.TreeMap;

/**
 * Read-only questions an operator or a test harness asks a running cluster over the network,
 * without hosting a replica: which node leads each group.
 */
public final class ClusterAdmin {
  private ClusterAdmin() {}

  /**
   * Asks every member of every group, over the network, whether it leads ({@link
   * GroupStatus#query}). A server that does not answer within the timeout (killed, paused,
   * partitioned away) counts as not leading; when two members say they lead (an old leader that
   * has not yet noticed), the one with the higher term wins.
   *
   * @param cluster the cluster
   * @param timeoutMs how long to wait for each server
   * @return group name to leader node id (0 when no member says it leads), by group name
   */
  public static Map<String, Integer> leaders(ClusterConfig cluster, long timeoutMs) {
    Map<String, Integer> out = new TreeMap<>();
    for (GroupStatus g : GroupStatus.query(cluster, timeoutMs)) {
      out.put(g.group().name(), g.leader());
    }
    return out;
  }
}
