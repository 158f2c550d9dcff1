package io.eyrie.core.internal;

import io.eyrie.multicast.GroupId;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The cluster as a {@link ClientProxy} reaches it: multicasts, queries, and the partitions it
 * knows. {@link MulticastTransport} is the real one; a test gives the proxy a fake instead.
 */
public interface ProxyTransport {

  /**
   * Multicasts a message and waits for the reply of one of its destinations.
   *
   * @param dests the destination groups
   * @param replyGroup the destination whose reply completes the future
   * @param payload the message
   * @return the decoded reply
   */
  CompletableFuture<Object> multicast(Set<GroupId> dests, GroupId replyGroup, Object payload);

  /**
   * Sends a read-only query to one group.
   *
   * @param group the group
   * @param query the query
   * @return the decoded answer
   */
  CompletableFuture<Object> query(GroupId group, Object query);

  /** Learns the groups added to the running cluster; callers ignore how it completes. */
  CompletableFuture<?> refreshView();

  /** Returns the partitions known now, ascending. */
  List<GroupId> partitions();
}
