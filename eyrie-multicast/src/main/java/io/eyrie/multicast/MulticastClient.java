package io.eyrie.multicast;

import io.eyrie.multicast.internal.Wire;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client of an Eyrie cluster: atomically multicasts messages to sets of groups and sends
 * read-only queries, over one lazily opened connection per node.
 *
 * <p>Each multicast gets the next sequence number of this client and keeps the same
 * {@link MsgId} through every resend (after an attempt timeout, a lost connection or an
 * UNAVAILABLE answer), which lets the cluster execute it exactly once. A call completes with the
 * reply group's decoded reply, with a {@link MulticastException} if the cluster refused or failed
 * it, or with a {@link TimeoutException} after the total timeout (the outcome is then unknown).
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
  private static final Logger LOG = LoggerFactory.getLogger(MulticastClient.class);
  private static final int MAX_REPLY_FRAME_BYTES = 64 << 20;

  private final ClusterConfig cluster;
  private final Codec codec;
  private final long clientId;
  private final long attemptTimeoutMs;
  private final long totalTimeoutMs;
  private final EventLoopGroup io;
  private final Map<Integer, ClientConnection> conns;
  private final Map<GroupId, Integer> leaderHints = new ConcurrentHashMap<>();
  private final Object seqLock = new Object();
  private final AtomicLong seqs = new AtomicLong();
  private final ConcurrentSkipListSet<Long> unfinished = new ConcurrentSkipListSet<>();
  private final AtomicLong requestIds = new AtomicLong();
  private final AtomicInteger roundRobin = new AtomicInteger();
  private final AtomicLong resends = new AtomicLong();
  private final Set<ClientCall> outstanding = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean closed = new AtomicBoolean();

  private MulticastClient(Builder b) {
    this.cluster = Objects.requireNonNull(b.cluster, "cluster");
    this.codec = new Codec(b.registry == null ? CodecRegistry.create() : b.registry);
    this.clientId = b.clientId != 0 ? b.clientId : randomClientId();
    this.attemptTimeoutMs = b.attemptTimeoutMs;
    this.totalTimeoutMs = b.totalTimeoutMs;
    this.io = new NioEventLoopGroup(2, new DefaultThreadFactory("eyrie-client-" + Long.toHexString(clientId), true));
    Bootstrap base = new Bootstrap().group(io).channel(NioSocketChannel.class)
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(attemptTimeoutMs, 10_000));
    Map<Integer, ClientConnection> m = new TreeMap<>();
    for (ClusterConfig.NodeInfo n : cluster.nodes().values()) {
      m.put(n.id(), new ClientConnection(this, n, base.clone(), codec, MAX_REPLY_FRAME_BYTES));
    }
    this.conns = Collections.unmodifiableMap(m);
  }

  private static long randomClientId() {
    SecureRandom rnd = new SecureRandom();
    long id;
    do {
      id = rnd.nextLong();
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
    return resends.get();
  }

  /**
   * Multicasts a message whose reply comes from the smallest destination group.
   *
   * @param dests the destination groups, at least one, all in the cluster
   * @param payload the message, of a registered class (or a byte array)
   * @return the reply group's decoded reply; fails with {@link IllegalArgumentException} for
   *     invalid arguments, {@link MulticastException} if the cluster refused or failed the
   *     message, {@link TimeoutException} if no answer came within the total timeout
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
    return submit(new ClientCall(seq, replyGroup, start, null));
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
    byte[] bytes;
    try {
      if (group == null || !cluster.groups().containsKey(group)) {
        throw new IllegalArgumentException("unknown group " + group);
      }
      bytes = codec.encode(query);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return submit(new ClientCall(-1, group, null, bytes));
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

  private CompletableFuture<Object> submit(ClientCall c) {
    outstanding.add(c);
    // Also covers a caller cancelling the future: the call stops and its seq counts as finished.
    c.result.whenComplete((v, e) -> cleanup(c));
    if (closed.get()) {
      finish(c, null, new IllegalStateException("the client is closed"));
      return c.result;
    }
    synchronized (c) {
      c.totalTimer = schedule(() -> finish(c, null, new TimeoutException("no answer for " + c + " within "
          + totalTimeoutMs + " ms; the outcome is unknown")), totalTimeoutMs);
    }
    attempt(c, 0);
    return c.result;
  }

  /** Sends the call's request to a node hosting its group, preferring one other than {@code avoid}. */
  void attempt(ClientCall c, int avoid) {
    ClientConnection conn;
    long rid;
    Object frame;
    synchronized (c) {
      if (c.result.isDone()) {
        return;
      }
      conn = conns.get(pick(c.group, avoid));
      rid = requestIds.incrementAndGet();
      if (c.attempts++ > 0) {
        resends.incrementAndGet();
      }
      c.current = rid;
      c.currentNode = conn.nodeId();
      c.currentChannel = null;
      c.sent.add(new ClientCall.Sent(conn, rid));
      conn.inflight.put(rid, c);
      cancel(c.attemptTimer);
      c.attemptTimer = schedule(() -> onAttemptTimeout(c, rid), attemptTimeoutMs);
      frame = c.frame(rid);
    }
    conn.channel().whenComplete((ch, err) -> {
      if (err != null) {
        retryLater(c, rid, "cannot connect to node " + conn.nodeId() + ": " + err);
        return;
      }
      synchronized (c) {
        if (c.current == rid) {
          c.currentChannel = ch;
        }
      }
      ch.writeAndFlush(frame).addListener(f -> {
        if (!f.isSuccess()) {
          retryLater(c, rid, "cannot write to node " + conn.nodeId() + ": " + f.cause());
        }
      });
    });
  }

  private int pick(GroupId group, int avoid) {
    List<Integer> members = cluster.group(group).members();
    Integer hint = leaderHints.get(group);
    long now = System.nanoTime();
    if (hint != null && hint != avoid && !conns.get(hint).down(now)) {
      return hint;
    }
    int n = members.size();
    int start = Math.floorMod(roundRobin.getAndIncrement(), n);
    int downOther = 0;
    for (int i = 0; i < n; i++) {
      int m = members.get((start + i) % n);
      if (m != avoid && !conns.get(m).down(now)) {
        return m;
      }
      if (m != avoid && downOther == 0) {
        downOther = m;
      }
    }
    // Nothing better: the avoided node if it still accepts connections, else anyone.
    if (avoid != 0 && members.contains(avoid) && !conns.get(avoid).down(now)) {
      return avoid;
    }
    return downOther != 0 ? downOther : members.get(start);
  }

  private void onAttemptTimeout(ClientCall c, long rid) {
    int node;
    synchronized (c) {
      if (c.result.isDone() || c.current != rid) {
        return;
      }
      c.current = 0;
      node = c.currentNode;
    }
    // The old request stays registered: its reply, should it still come, is as good as any.
    LOG.debug("{}: no reply from node {} within {} ms, resending", c, node, attemptTimeoutMs);
    attempt(c, node);
  }

  /** Gives up on attempt {@code rid} and sends again after a short random backoff. */
  void retryLater(ClientCall c, long rid, String why) {
    synchronized (c) {
      if (c.result.isDone() || c.current != rid) {
        return;
      }
      c.current = 0;
      cancel(c.attemptTimer);
      int node = c.currentNode;
      conns.get(node).inflight.remove(rid, c);
      long delay = 50 + ThreadLocalRandom.current().nextLong(151);
      c.backoffTimer = schedule(() -> attempt(c, node), delay);
    }
    LOG.debug("{}: {}; resending", c, why);
  }

  /** Handles a reply read from a node's connection (I/O thread). */
  void onReply(ClientConnection conn, Wire.ClientReply r) {
    ClientCall c = conn.inflight.get(r.requestId());
    if (c == null) {
      if (r.requestId() == -1) {
        LOG.warn("node {} rejected a frame: {}", conn.nodeId(), r.error());
      } else {
        LOG.debug("node {}: reply to a finished or unknown request {}", conn.nodeId(), r.requestId());
      }
      return;
    }
    if (r.leaderHint() > 0 && cluster.group(c.group).members().contains(r.leaderHint())) {
      leaderHints.put(c.group, r.leaderHint());
    }
    switch (r.status()) {
      case 0 -> {
        Object value;
        try {
          value = r.body() == null ? null : codec.decode(r.body());
        } catch (IllegalArgumentException e) {
          finish(c, null, new IllegalArgumentException("cannot decode the reply to " + c + ": " + e.getMessage(), e));
          return;
        }
        finish(c, value, null);
      }
      case 2 -> {
        conn.inflight.remove(r.requestId(), c);
        retryLater(c, r.requestId(), "node " + conn.nodeId() + " unavailable: " + r.error());
      }
      default -> finish(c, null, new MulticastException(r.status(), r.error()));
    }
  }

  /** Handles the loss of a node's connection: live attempts written on it go elsewhere. */
  void onConnectionLost(ClientConnection conn, Channel ch) {
    for (Map.Entry<Long, ClientCall> e : conn.inflight.entrySet()) {
      ClientCall c = e.getValue();
      boolean live;
      synchronized (c) {
        live = c.current == e.getKey() && c.currentChannel == ch;
      }
      if (live) {
        retryLater(c, e.getKey(), "connection to node " + conn.nodeId() + " lost");
      }
    }
  }

  private void finish(ClientCall c, Object value, Throwable err) {
    // The seq leaves the unfinished set before the future completes, so a call issued by a
    // thread that saw the completion already carries the advanced watermark.
    if (c.seq >= 0) {
      unfinished.remove(c.seq);
    }
    if (err != null) {
      c.result.completeExceptionally(err);
    } else {
      c.result.complete(value);
    }
  }

  private void cleanup(ClientCall c) {
    if (c.seq >= 0) {
      unfinished.remove(c.seq);
    }
    outstanding.remove(c);
    synchronized (c) {
      c.current = 0;
      cancel(c.attemptTimer);
      cancel(c.totalTimer);
      cancel(c.backoffTimer);
      for (ClientCall.Sent s : c.sent) {
        s.conn().inflight.remove(s.rid(), c);
      }
    }
  }

  private ScheduledFuture<?> schedule(Runnable task, long delayMs) {
    try {
      return io.schedule(task, delayMs, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      // Only after close(), which fails every outstanding call anyway.
      return null;
    }
  }

  private static void cancel(ScheduledFuture<?> f) {
    if (f != null) {
      f.cancel(false);
    }
  }

  /** Fails every outstanding call, closes the connections and stops the client's threads. Idempotent. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    for (ClientCall c : outstanding) {
      finish(c, null, new IllegalStateException("the client is closed"));
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

    private Builder() {}

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
     * node (default 3000 ms).
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
     * Sets the client incarnation id (default: a random nonzero value). Two live clients must
     * never share an id, and a restarted client must not reuse its old one.
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
      return new MulticastClient(this);
    }
  }
}
