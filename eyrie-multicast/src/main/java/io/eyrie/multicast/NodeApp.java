package io.eyrie.multicast;

/**
 * What a node needs to host a service: the codec registrations of everything it sends and
 * stores, and the deliverer of each group replica. A DS-SMR service ({@code io.eyrie.core.Service})
 * is one; handing it to {@link Node#start(ClusterConfig, int, java.nio.file.Path, NodeApp, NodeOptions)}
 * or {@link EmbeddedCluster.Builder#app(NodeApp)} passes both at once, so that they cannot
 * disagree.
 */
public interface NodeApp {

  /** Returns the codec registrations (an immutable registry). */
  CodecRegistry registry();

  /** Returns the factory of the deliverers of the groups a node hosts. */
  DelivererFactory deliverers();

  /**
   * Returns a read-only query that every group of the service answers once it serves clients, or
   * null (the default) if there is none. {@link EmbeddedCluster.Builder#start()} waits until
   * each group has answered it, so that a first query after start does not wait for a new
   * leader to become able to serve reads.
   */
  default Object readinessQuery() {
    return null;
  }
}
