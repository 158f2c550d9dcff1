package io.eyrie.core;

import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.GroupId;

/** A group's deliverer that needs to know where it runs; Eyrie calls {@link #init} once before use. */
public interface ClusterAware {

  /**
   * Tells the deliverer its group, the cluster and the codec.
   *
   * @param self the group this replica belongs to
   * @param cluster the cluster
   * @param codec the cluster's codec
   */
  void init(GroupId self, ClusterConfig cluster, Codec codec);
}
