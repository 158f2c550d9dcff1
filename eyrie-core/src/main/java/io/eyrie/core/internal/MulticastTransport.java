package io.eyrie.core.internal;

import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.CodecRegistry;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MulticastClient;
import io.eyrie.multicast.ResendListener;
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

  /**
   * Connects the multicast client a DS-SMR client sends through. One multicast never needs longer
   * than the whole command may take; the margin of a second lets the command's own deadline
   * (which names the command) fire first.
   *
   * @param cluster the cluster
   * @param registry how messages are encoded
   * @param totalTimeoutMs how long a whole command may take
   * @param attemptTimeoutMs how long one attempt may take, or 0 for the default
   * @param resendListener told of each resend, or null
   * @return the client (its caller owns it)
   */
  public static MulticastClient connect(ClusterConfig cluster, CodecRegistry registry, long totalTimeoutMs,
      long attemptTimeoutMs, ResendListener resendListener, io.eyrie.multicast.TlsConfig tls) {
    MulticastClient.Builder mb = MulticastClient.newBuilder().cluster(cluster).registry(registry)
        .totalTimeoutMs(totalTimeoutMs + 1000);
    if (attemptTimeoutMs > 0) {
      mb.attemptTimeoutMs(attemptTimeoutMs);
    }
    return mb.resendListener(resendListener).tls(tls).build();
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
