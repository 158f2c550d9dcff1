/**
 * Genuine atomic multicast over Apache Ratis groups: the node runtime (one Ratis server hosting
 * many groups), exactly-once FIFO channels between groups carried in their logs, fault-tolerant
 * Skeen ordering, exactly-once client commands, and the client.
 *
 * <p>Applications implement {@link io.eyrie.multicast.Deliverer} for each group, start nodes
 * ({@link io.eyrie.multicast.Node}, or {@link io.eyrie.multicast.EmbeddedCluster} in one JVM),
 * and send with {@link io.eyrie.multicast.MulticastClient}. Everything under {@code internal}
 * is an implementation detail.
 */
package io.eyrie.multicast;
