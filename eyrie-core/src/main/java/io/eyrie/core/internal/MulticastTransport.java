package io.eyrie.core.internal;

import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MulticastClient;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/** Adapts a {@link MulticastClient}, which it does not own, to the {@link ProxyTransport} a proxy sends through. */
public final class MulticastTransport implements ProxyTransport {
  private final MulticastClient mc;

  /**
   * Wraps a multicast client.
   *
   * @param mc the client (closed by its owner, not here)
   */
  public MulticastTransport(MulticastClient mc) {
    this.mc = mc;
  }

  @Override
  public CompletableFuture<Object> multicast(Set<GroupId> dests, GroupId replyGroup, Object payload) {
    return mc.multicast(dests, replyGroup, payload);
  }

  @Override
  public CompletableFuture<Object> query(GroupId group, Object query) {
    return mc.query(group, query);
  }

  @Override
  public CompletableFuture<?> refreshView() {
    return mc.refreshView();
  }

  /** Returns the cluster file's partitions and those added to the running cluster that the client has learned. */
  @Override
  public List<GroupId> partitions() {
    return mc.cluster().partitions();
  }
}
