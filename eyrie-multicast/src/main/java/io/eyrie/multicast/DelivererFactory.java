package io.eyrie.multicast;

/** Creates the deliverer of each group replica that a node hosts. */
@FunctionalInterface
public interface DelivererFactory {

  /**
   * Creates the deliverer of one group replica, in its initial state.
   *
   * @param group the group
   * @param cluster the cluster the replica starts from, the same at every replica of the group:
   *     the cluster file's groups (and, for a group added to the running cluster, the groups its
   *     replicas were created knowing). Groups added later are not in it even on a node that
   *     knows them: they reach the replica through its log, so its initial state must depend on
   *     this configuration only
   * @param codec the cluster's codec
   * @return a new deliverer
   */
  Deliverer create(GroupId group, ClusterConfig cluster, Codec codec);
}
