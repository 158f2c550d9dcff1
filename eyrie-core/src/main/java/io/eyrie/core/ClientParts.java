package io.eyrie.core;

import io.eyrie.core.internal.ClientProxy;
import io.eyrie.core.internal.LocationCache;
import io.eyrie.core.internal.MulticastTransport;
import io.eyrie.core.internal.PartitionOps;
import io.eyrie.core.internal.ProxyTransport;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.CodecRegistry;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MulticastClient;
import io.eyrie.multicast.TlsConfig;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * Owns what a {@link Client} is made of, wired in one place from the {@link Settings} its builder
 * collects: the multicast client and the timer of the commands' deadlines (both stopped by {@link #close}), the
 * transport over the first, the location cache, the proxy (the paper's Algorithm 2) and the
 * partition operations behind the client's administration calls.
 */
record ClientParts(MulticastClient mc, ScheduledExecutorService timer, ProxyTransport net, LocationCache cache,
    ClientProxy proxy, PartitionOps ops) implements AutoCloseable {

  /** The settings a {@link Client.Builder} collects, with their defaults. */
  static final class Settings {
    ClusterConfig cluster;
    CodecRegistry registry;
    Client.Mode mode = Client.Mode.DSSMR;
    int retryThreshold = 3;
    long maxCachedLocations = LocationCache.DEFAULT_MAX_SIZE;
    long totalTimeoutMs = 30_000;
    long attemptTimeoutMs;
    MulticastClient.ResendListener resendListener;
    TlsConfig tls;
  }

  /** Connects the parts of a client as {@code b} says; refuses a cluster with no oracle or no partition. */
  static ClientParts connect(Settings b) {
    GroupId oracle = Objects.requireNonNull(b.cluster.oracle(), "the cluster needs an oracle group");
    if (b.cluster.partitions().isEmpty()) {
      throw new IllegalArgumentException("the cluster has no partition");
    }
    MulticastClient mc = multicastClient(b);
    ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "eyrie-client-deadlines");
      t.setDaemon(true);
      return t;
    });
    ProxyTransport net = new MulticastTransport(mc);
    LocationCache cache = new LocationCache(b.maxCachedLocations);
    ClientProxy proxy = new ClientProxy(net, oracle, b.mode, b.retryThreshold, b.totalTimeoutMs, timer, cache);
    return new ClientParts(mc, timer, net, cache, proxy, new PartitionOps(net, oracle, proxy, cache, timer));
  }

  /**
   * Connects the multicast client the proxy sends through. One multicast never needs longer than
   * the whole command may take; the margin of a second lets the command's own deadline (which
   * names the command) fire first.
   */
  private static MulticastClient multicastClient(Settings b) {
    MulticastClient.Builder mb = MulticastClient.newBuilder().cluster(b.cluster).registry(b.registry)
        .totalTimeoutMs(b.totalTimeoutMs + 1000);
    if (b.attemptTimeoutMs > 0) {
      mb.attemptTimeoutMs(b.attemptTimeoutMs);
    }
    return mb.resendListener(b.resendListener).tls(b.tls).build();
  }

  @Override
  public void close() {
    timer.shutdownNow();
    mc.close();
  }
}
