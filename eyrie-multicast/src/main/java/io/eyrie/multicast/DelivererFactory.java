package io.eyrie.multicast;

/** Creates the deliverer of each group replica that a node hosts. */
@FunctionalInterface
public interface DelivererFactory {

  /**
   * Creates the deliverer of one group replica, in its initial state.
   *
   * @param group the group
   * @param cluster the cluster the group belongs to
   * @param codec the cluster's codec
   * @return a new deliverer
   */
  Deliverer create(GroupId group, ClusterConfig cluster, Codec codec);
}
