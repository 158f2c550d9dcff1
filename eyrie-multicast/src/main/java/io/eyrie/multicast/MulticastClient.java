package io.eyrie.multicast;

import io.eyrie.multicast.internal.Wire;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Collections;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A client of an Eyrie cluster: atomically multicasts messages to sets of groups and sends
 * read-only queries, over one lazily opened connection per node.
 *
 * <p>Each multicast gets the next sequence number of this client and keeps the same
 * {@link MsgId} through every resend (after an attempt timeout, a lost connection or an
 * UNAVAILABLE answer), which lets the cluster execute it exactly once. A call completes with the
 * reply group's decoded reply, with a {@link MulticastException} if the cluster refused or failed
 * it, or with a {@link CallTimeoutException} (a {@link TimeoutException} carrying the
 * {@link MsgId}) when the outcome is unknown: after the total timeout, or as a
 * {@link ClientExpiredException} when the reply group forgot this client.
 *
 * <p>Thread-safe. Returned futures complete on the client's I/O threads: do not block in
 * dependent stages (use the {@code ...Async} variants for slow work).
 *
 * <pre>{@code
 * try (MulticastClient client = MulticastClient.connect(cluster, registry)) {
 *   Object reply = client.multicast(Set.of(p0, p1), new Transfer(1, 2, 10)).get();
 * }
 * }</pre>
 */
public final class MulticastClient implements AutoCloseable {
  static {
    LogDefaults.apply(); // before Ratis or Netty log anything
  }

  private volatile ClusterConfig cluster;
  private final Codec codec;
  private final long clientId;
  private final EventLoopGroup io;
  private final CallDispatcher dispatcher;
  private final Object seqLock = new Object();
  private final AtomicLong seqs = new AtomicLong();
  /** Seqs taken and not yet finished; the smallest is the watermark. */
  private final ConcurrentSkipListSet<Long> unfinished = new ConcurrentSkipListSet<>();

  private MulticastClient(Builder b) {
    this.cluster = Objects.requireNonNull(b.cluster, "cluster");
    this.codec = new Codec(b.registry == null ? CodecRegistry.empty() : b.registry);
    this.clientId = b.clientId != 0 ? b.clientId : randomClientId(b.tls);
    this.io = new NioEventLoopGroup(2, new DefaultThreadFactory("eyrie-client-" + Long.toHexString(clientId), true));
    this.dispatcher = new CallDispatcher(cluster, codec, b.attemptTimeoutMs, b.totalTimeoutMs, io, unfinished::remove,
        b.resendListener, b.tls);
  }

  /**
   * A new incarnation id: random and nonzero; with TLS its top 32 bits are the identity's
   * {@link Identity#clientIdTag()} (nodes refuse other ids from a client or admin identity) and
   * only the low 32 bits are random.
   */
  private static long randomClientId(TlsConfig tls) {
    SecureRandom rnd = new SecureRandom();
    long id;
    do {
      id = tls == null ? rnd.nextLong()
          : (long) tls.identity().clientIdTag() << 32 | (rnd.nextInt() & 0xFFFF_FFFFL);
    } while (id == 0);
    return id;
  }

  /**
   * Creates a client with the default timeouts. Connections are opened on first use.
   *
   * @param cluster the cluster's configuration
   * @param registry the application's classes, the same the nodes use
   * @return the client
   */
  public static MulticastClient connect(ClusterConfig cluster, CodecRegistry registry) {
    return newBuilder().cluster(cluster).registry(registry).build();
  }

  /** Returns a builder for a client with non-default options. */
  public static Builder newBuilder() {
    return new Builder();
  }

  /** Returns this client's incarnation id, the {@link MsgId#client()} of its messages. */
  public long clientId() {
    return clientId;
  }

  /** Returns how many times a request was sent again (to the same or another node); for tests and monitoring. */
  public long resends() {
    return dispatcher.resends();
  }

  /**
   * Multicasts a message whose reply comes from the smallest destination group.
   *
   * @param dests the destination groups, at least one, all in the cluster
   * @param payload the message, of a registered class (or a byte array)
   * @return the reply group's decoded reply; fails with {@link IllegalArgumentException} for
   *     invalid arguments, {@link MulticastException} if the cluster refused or failed the
   *     message, {@link TimeoutException} ({@link CallTimeoutException}) if the outcome is unknown:
   *     no answer came within the total timeout, or the reply group forgot this client
   */
  public CompletableFuture<Object> multicast(Set<GroupId> dests, Object payload) {
    GroupId reply = null;
    if (dests != null && !dests.isEmpty() && !hasNull(dests)) {
      reply = Collections.min(dests);
    }
    return multicast(dests, reply, payload);
  }

  /**
   * Multicasts a message and waits for the reply of one of its destinations.
   *
   * @param dests the destination groups, at least one, all in the cluster
   * @param replyGroup the destination whose reply completes the future
   * @param payload the message, of a registered class (or a byte array)
   * @return the reply group's decoded reply; fails as {@link #multicast(Set, Object)} does
   */
  public CompletableFuture<Object> multicast(Set<GroupId> dests, GroupId replyGroup, Object payload) {
    if (dests != null && !hasNull(dests) && !cluster.groups().keySet().containsAll(dests)) {
      // Perhaps a group added to the running cluster since this client started: ask once.
      return refreshView().handle((v, e) -> v).thenCompose(v -> send(dests, replyGroup, payload));
    }
    return send(dests, replyGroup, payload);
  }

  private CompletableFuture<Object> send(Set<GroupId> dests, GroupId replyGroup, Object payload) {
    GroupId[] sorted;
    byte[] bytes;
    try {
      if (dests == null || dests.isEmpty() || hasNull(dests)) {
        throw new IllegalArgumentException("a multicast needs at least one destination and no null: " + dests);
      }
      sorted = new TreeSet<>(dests).toArray(new GroupId[0]);
      for (GroupId g : sorted) {
        if (!cluster.groups().containsKey(g)) {
          throw new IllegalArgumentException("unknown group " + g);
        }
      }
      if (replyGroup == null || Arrays.binarySearch(sorted, replyGroup) < 0) {
        throw new IllegalArgumentException("reply group " + replyGroup + " is not a destination");
      }
      bytes = codec.encode(payload);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    long seq;
    long watermark;
    // Allocation and registration are one step, or a concurrent call could compute a watermark
    // above a seq that was taken but not yet registered, and make that command stale.
    synchronized (seqLock) {
      seq = seqs.getAndIncrement();
      unfinished.add(seq);
      watermark = unfinished.first();
    }
    Wire.Start start = new Wire.Start(MsgId.valueOf(clientId, seq, 0), sorted, replyGroup, bytes, watermark);
    return dispatcher.submit(new ClientCall(seq, replyGroup, start, null));
  }

  /**
   * Sends a read-only query to one group; it is answered with a linearizable read and may be
   * sent more than once.
   *
   * @param group the group
   * @param query the query, of a registered class
   * @return the decoded answer; fails as {@link #multicast(Set, Object)} does
   */
  public CompletableFuture<Object> query(GroupId group, Object query) {
    if (group != null && !cluster.groups().containsKey(group)) {
      return refreshView().handle((v, e) -> v).thenCompose(v -> ask(group, query));
    }
    return ask(group, query);
  }

  private CompletableFuture<Object> ask(GroupId group, Object query) {
    byte[] bytes;
    try {
      if (group == null || !cluster.groups().containsKey(group)) {
        throw new IllegalArgumentException("unknown group " + group);
      }
      bytes = codec.encode(query);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return dispatcher.submit(new ClientCall(-1, group, null, bytes));
  }

  /**
   * Asks the node serving {@code group} for the status of every group (a query of no bytes,
   * {@link Wire.QueryRequest}); answered with the text form {@link GroupStatus} reads.
   */
  CompletableFuture<Object> status(GroupId group) {
    return dispatcher.submit(new ClientCall(-1, group, null, new byte[0]));
  }

  // Set.of(...).contains(null) throws, so look for null by iterating.
  private static boolean hasNull(Set<GroupId> dests) {
    for (GroupId g : dests) {
      if (g == null) {
        return true;
      }
    }
    return false;
  }

  /**
   * Returns the cluster as this client knows it: its configuration, and the groups added since
   * that {@link #refreshView()} learned.
   */
  public ClusterConfig cluster() {
    return cluster;
  }

  /**
   * Asks a node for the cluster as it knows it (the groups added to the running cluster
   * included) and learns the groups it did not know. Call it when the application names a group
   * this client does not know, or when a command that must reach every partition was refused
   * because it missed one.
   *
   * @return the view after learning
   */
  public CompletableFuture<ClusterConfig> refreshView() {
    return openView().thenApply(told -> cluster);
  }

  /**
   * Like {@link #refreshView()}, but returns the view as the node told it: the groups that are
   * open, without those this client learned otherwise (an addition it started that stopped
   * halfway, {@link ClusterAdmin#addGroup}).
   */
  CompletableFuture<ClusterConfig> openView() {
    return dispatcher.submit(new ClientCall(-1, null, null, null)).thenApply(o -> {
      ClusterConfig told = ClusterConfig.parse((String) o);
      for (ClusterConfig.GroupInfo g : told.groups().values()) {
        learn(g);
      }
      return told;
    });
  }

  /** Learns a group added to the running cluster (for {@link ClusterAdmin}, which adds it). */
  synchronized void learn(ClusterConfig.GroupInfo g) {
    if (!cluster.groups().containsKey(g.id())) {
      cluster = cluster.withGroup(g);
      dispatcher.learn(cluster);
    }
  }

  /** Fails every outstanding call, closes the connections and stops the client's threads. Idempotent. */
  @Override
  public void close() {
    if (!dispatcher.close()) {
      return;
    }
    io.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    for (EventExecutor e : io) {
      if (e.inEventLoop()) {
        return; // closed from a callback: waiting here would wait for ourselves
      }
    }
    io.terminationFuture().awaitUninterruptibly(5, TimeUnit.SECONDS);
  }

  /** Options for a {@link MulticastClient}; {@link #build()} validates them. */
  public static final class Builder {
    private ClusterConfig cluster;
    private CodecRegistry registry;
    private long attemptTimeoutMs = 3000;
    private long totalTimeoutMs = 30_000;
    private long clientId;
    private ResendListener resendListener;
    private TlsConfig tls;

    private Builder() {}

    /**
     * Connects with mutual TLS as the identity of {@code tls}'s certificate (default: null,
     * plaintext), to nodes whose client port runs TLS ({@link NodeOptions#tls()}). The node
     * lets the identity send what its role allows: a {@code client} certificate the
     * application's commands, an {@code admin} one also group changes and partition
     * administration. A node that refuses the certificate, or a request for the role, fails the
     * call with a {@link MulticastException} of status {@link Status#FORBIDDEN}.
     *
     * @param tls the client's TLS configuration, e.g. {@code TlsConfig.fromDir(certs, "client-app")}; null for none
     * @return this builder
     */
    public Builder tls(TlsConfig tls) {
      this.tls = tls;
      return this;
    }

    /**
     * Sets a listener told each time a call is sent again (default: none).
     *
     * @param listener the listener, or null
     * @return this builder
     */
    public Builder resendListener(ResendListener listener) {
      this.resendListener = listener;
      return this;
    }

    /**
     * Sets the cluster to talk to (required).
     *
     * @param cluster the cluster's configuration
     * @return this builder
     */
    public Builder cluster(ClusterConfig cluster) {
      this.cluster = cluster;
      return this;
    }

    /**
     * Sets the application's classes, the same registry the nodes use (default: none).
     *
     * @param registry the registry
     * @return this builder
     */
    public Builder registry(CodecRegistry registry) {
      this.registry = registry;
      return this;
    }

    /**
     * Sets how long to wait for one node's answer before sending the same request to another
     * node (default 3000 ms). Each further attempt of the same call waits twice as long as the
     * one before, up to four times this value, so that an overloaded cluster is not flooded with
     * resends.
     *
     * @param ms the attempt timeout, positive
     * @return this builder
     */
    public Builder attemptTimeoutMs(long ms) {
      this.attemptTimeoutMs = ms;
      return this;
    }

    /**
     * Sets how long a call may take in all before it fails with a {@link TimeoutException}
     * (default 30000 ms).
     *
     * @param ms the total timeout, positive
     * @return this builder
     */
    public Builder totalTimeoutMs(long ms) {
      this.totalTimeoutMs = ms;
      return this;
    }

    /**
     * Sets the client incarnation id (default: a random nonzero value; with {@link #tls} its top
     * 32 bits are the identity's {@link Identity#clientIdTag()}). Two live clients must never
     * share an id, and a restarted client must not reuse its old one. With TLS, {@link #build()}
     * refuses an id the identity may not use ({@link Identity#mayUseClientId}).
     *
     * @param id the id, nonzero
     * @return this builder
     */
    public Builder clientId(long id) {
      if (id == 0) {
        throw new IllegalArgumentException("the client id must be nonzero");
      }
      this.clientId = id;
      return this;
    }

    /**
     * Validates the options and creates the client.
     *
     * @return the client
     * @throws IllegalArgumentException if an option is invalid or the cluster is missing
     */
    public MulticastClient build() {
      if (cluster == null) {
        throw new IllegalArgumentException("the cluster is required");
      }
      if (attemptTimeoutMs <= 0 || totalTimeoutMs <= 0) {
        throw new IllegalArgumentException("timeouts must be positive: attempt " + attemptTimeoutMs
            + " ms, total " + totalTimeoutMs + " ms");
      }
      if (tls != null && clientId != 0 && !tls.identity().mayUseClientId(clientId)) {
        throw new IllegalArgumentException("client id " + String.format("%016x", clientId) + " is not one of identity "
            + tls.identity() + "'s: with TLS its top 32 bits must be "
            + String.format("%08x", tls.identity().clientIdTag()) + " (Identity.clientIdTag)");
      }
      return new MulticastClient(this);
    }
  }

  /**
   * Told each time a {@link MulticastClient} sends a call again, for monitoring and diagnostics.
   * Called on the client's I/O threads: return quickly and never block.
   */
  @FunctionalInterface
  public interface ResendListener {

    /** Why an attempt was given up. */
    enum Reason {
      /** The node did not answer within the attempt timeout. */
      ATTEMPT_TIMEOUT,
      /** The connection could not be opened, written to, or was lost. */
      CONNECTION,
      /** The node answered UNAVAILABLE (not the leader, or shutting down). */
      UNAVAILABLE
    }

    /**
     * One attempt of a call was given up and the call will be sent again.
     *
     * @param msgId the multicast's id, or null for a query
     * @param node the node the given-up attempt went to
     * @param attempts how many attempts the call has made so far
     * @param reason why
     */
    void attemptFailed(MsgId msgId, int node, int attempts, Reason reason);
  }
}
