package io.eyrie.multicast;

import io.eyrie.multicast.internal.Wire;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sending half of a {@link MulticastClient}: picks a node for each attempt of a call, and
 * sends the same content again after an attempt timeout, a lost or refused connection or an
 * UNAVAILABLE answer, until a definite answer or the total timeout.
 *
 * <p>Every call's mutable state is guarded by the call itself; an attempt is identified by its
 * request id, so timers, write failures and replies that belong to a superseded attempt find
 * {@code call.current} changed and do nothing.
 */
final class CallDispatcher {
  private static final Logger LOG = LoggerFactory.getLogger(CallDispatcher.class);
  private static final int MAX_REPLY_FRAME_BYTES = 64 << 20;
  /** The longest attempt timeout, as a multiple of the first (a power of two). */
  static final int MAX_BACKOFF = 4;

  /** The cluster as the client knows it; grows when the client learns added groups. */
  private volatile ClusterConfig cluster;
  private final Codec codec;
  private final long attemptTimeoutMs;
  private final long totalTimeoutMs;
  private final EventLoopGroup io;
  private final LongConsumer seqFinished;
  private final MulticastClient.ResendListener resendListener;
  private final Map<Integer, ClientConnection> conns;
  private final Map<GroupId, Integer> leaderHints = new ConcurrentHashMap<>();
  private final AtomicLong requestIds = new AtomicLong();
  private final AtomicInteger roundRobin = new AtomicInteger();
  private final AtomicLong resends = new AtomicLong();
  private final Set<ClientCall> outstanding = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean closed = new AtomicBoolean();

  /**
   * Creates the dispatcher.
   *
   * @param seqFinished told a multicast's seq as it finishes, before its future completes
   */
  CallDispatcher(ClusterConfig cluster, Codec codec, long attemptTimeoutMs, long totalTimeoutMs, EventLoopGroup io,
      LongConsumer seqFinished, MulticastClient.ResendListener resendListener, TlsConfig tls) {
    this.cluster = cluster;
    this.codec = codec;
    this.attemptTimeoutMs = attemptTimeoutMs;
    this.totalTimeoutMs = totalTimeoutMs;
    this.io = io;
    this.seqFinished = seqFinished;
    this.resendListener = resendListener;
    Bootstrap base = new Bootstrap().group(io).channel(NioSocketChannel.class)
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(attemptTimeoutMs, 10_000));
    Map<Integer, ClientConnection> m = new TreeMap<>();
    for (ClusterConfig.NodeInfo n : cluster.nodes().values()) {
      m.put(n.id(), new ClientConnection(this, n, base.clone(), codec, MAX_REPLY_FRAME_BYTES, tls));
    }
    this.conns = Collections.unmodifiableMap(m);
  }

  /** Replaces the cluster this dispatcher routes by (same nodes, more groups). */
  void learn(ClusterConfig newer) {
    this.cluster = newer;
  }

  long resends() {
    return resends.get();
  }

  /** Sends a new call and returns its future. */
  CompletableFuture<Object> submit(ClientCall c) {
    outstanding.add(c);
    // Also covers a caller cancelling the future: the call stops and its seq counts as finished.
    c.result.whenComplete((v, e) -> cleanup(c));
    if (closed.get()) {
      finish(c, null, new IllegalStateException("the client is closed"));
      return c.result;
    }
    synchronized (c) {
      if (c.result.isDone()) {
        return c.result;
      }
      c.totalTimer = schedule(() -> finish(c, null, new CallTimeoutException(c.msgId(), "no answer for " + c
          + " within " + totalTimeoutMs + " ms; the outcome is unknown")), totalTimeoutMs);
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
      c.attemptTimer = schedule(() -> onAttemptTimeout(c, rid), attemptTimeout(c.attempts));
      frame = c.frame(rid);
    }
    conn.channel().whenComplete((ch, err) -> {
      if (err != null) {
        String refused = ClientConnection.tlsRefusal(err);
        if (refused != null) {
          refuseTls(c, rid, conn, refused);
          return;
        }
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

  /**
   * How long attempt {@code n} (1-based) waits: the attempt timeout, doubled for each attempt
   * that timed out before, up to {@value #MAX_BACKOFF} times. Under overload answers take longer
   * than one attempt timeout; resending at a fixed pace would only add duplicate submissions.
   */
  long attemptTimeout(int n) {
    int doublings = Math.min(Math.max(n - 1, 0), Integer.numberOfTrailingZeros(MAX_BACKOFF));
    return attemptTimeoutMs << doublings;
  }

  private int pick(GroupId group, int avoid) {
    // A view request (no group) may go to any node.
    List<Integer> members = group == null ? List.copyOf(cluster.nodes().keySet()) : cluster.group(group).members();
    Integer hint = group == null ? null : leaderHints.get(group);
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

  /** An attempt that was ended: the node it went to, and how many attempts the call had made. */
  private record Ended(int node, int attempts) {}

  /** Ends attempt {@code rid} if it is still the call's live one, else returns null; the caller holds the call's lock. */
  private static Ended end(ClientCall c, long rid) {
    if (c.result.isDone() || c.current != rid) {
      return null;
    }
    c.current = 0;
    return new Ended(c.currentNode, c.attempts);
  }

  private void onAttemptTimeout(ClientCall c, long rid) {
    Ended e;
    synchronized (c) {
      e = end(c, rid);
    }
    if (e == null) {
      return;
    }
    // The old request stays registered: its reply, should it still come, is as good as any.
    LOG.debug("{}: no reply from node {} within {} ms, resending", c, e.node(), attemptTimeout(e.attempts()));
    notifyResend(c, e.node(), e.attempts(), MulticastClient.ResendListener.Reason.ATTEMPT_TIMEOUT);
    attempt(c, e.node());
  }

  /** Gives up on attempt {@code rid} and sends again after a short random backoff. */
  void retryLater(ClientCall c, long rid, String why) {
    retryLater(c, rid, why, MulticastClient.ResendListener.Reason.CONNECTION);
  }

  private void retryLater(ClientCall c, long rid, String why, MulticastClient.ResendListener.Reason reason) {
    Ended e;
    synchronized (c) {
      e = end(c, rid);
      if (e == null) {
        return;
      }
      cancel(c.attemptTimer);
      conns.get(e.node()).inflight.remove(rid, c);
      long delay = 50 + ThreadLocalRandom.current().nextLong(151);
      c.backoffTimer = schedule(() -> attempt(c, e.node()), delay);
    }
    LOG.debug("{}: {}; resending", c, why);
    notifyResend(c, e.node(), e.attempts(), reason);
  }

  private void notifyResend(ClientCall c, int node, int attempts, MulticastClient.ResendListener.Reason reason) {
    if (resendListener == null) {
      return;
    }
    try {
      resendListener.attemptFailed(c.msgId(), node, attempts, reason);
    } catch (RuntimeException e) {
      LOG.warn("the resend listener failed", e);
    }
  }

  /**
   * Fails a call whose connection the node refused for this client's certificate (or the client
   * the node's): trying again, here or elsewhere, would be refused the same way.
   */
  private void refuseTls(ClientCall c, long rid, ClientConnection conn, String why) {
    synchronized (c) {
      if (c.result.isDone() || c.current != rid) {
        return;
      }
    }
    finish(c, null, new MulticastException(Status.FORBIDDEN, "the TLS handshake with node " + conn.nodeId()
        + " failed: " + why));
  }

  /** Fails the calls whose current attempt is on this channel (the node refused the whole connection). */
  private void failLive(ClientConnection conn, Channel ch, Status status, String why) {
    for (Map.Entry<Long, ClientCall> e : conn.inflight.entrySet()) {
      ClientCall c = e.getValue();
      boolean live;
      synchronized (c) {
        live = c.current == e.getKey() && (ch == null || c.currentChannel == ch);
      }
      if (live) {
        finish(c, null, new MulticastException(status, "node " + conn.nodeId() + ": " + why));
      }
    }
  }

  /** Handles a reply read from a node's connection (I/O thread). */
  void onReply(ClientConnection conn, Wire.ClientReply r) {
    onReply(conn, null, r);
  }

  /** Handles a reply read from a channel of a node's connection (I/O thread). */
  void onReply(ClientConnection conn, Channel ch, Wire.ClientReply r) {
    ClientCall c = conn.inflight.get(r.requestId());
    if (c == null) {
      if (r.requestId() == -1 && r.status() == Status.FORBIDDEN) {
        // The node refuses this connection as a whole (plaintext on its TLS port, a certificate
        // without an identity): every call on it would be refused again.
        LOG.warn("node {} refused the connection: {}", conn.nodeId(), r.error());
        failLive(conn, ch, r.status(), r.error());
      } else if (r.requestId() == -1) {
        LOG.warn("node {} rejected a frame: {}", conn.nodeId(), r.error());
      } else {
        LOG.debug("node {}: reply to a finished or unknown request {}", conn.nodeId(), r.requestId());
      }
      return;
    }
    if (r.leaderHint() > 0 && c.group != null && cluster.group(c.group).members().contains(r.leaderHint())) {
      leaderHints.put(c.group, r.leaderHint());
    }
    switch (r.status()) {
      case OK -> {
        Object value;
        try {
          value = r.body() == null ? null : codec.decode(r.body());
        } catch (IllegalArgumentException e) {
          finish(c, null, new IllegalArgumentException("cannot decode the reply to " + c + ": " + e.getMessage(), e));
          return;
        }
        finish(c, value, null);
      }
      case UNAVAILABLE -> {
        conn.inflight.remove(r.requestId(), c);
        retryLater(c, r.requestId(), "node " + conn.nodeId() + " unavailable: " + r.error(),
            MulticastClient.ResendListener.Reason.UNAVAILABLE);
      }
      // EXPIRED is not a refusal: the message may have run (see ClientExpiredException).
      case EXPIRED -> finish(c, null, new ClientExpiredException(c.msgId(), "EXPIRED for " + c
          + ", the outcome is unknown: " + r.error()));
      case ERROR, BAD_REQUEST, STALE, FORBIDDEN -> finish(c, null, new MulticastException(r.status(), r.error()));
    }
  }

  /** Handles the loss of a node's connection: live attempts written on it go elsewhere. */
  void onConnectionLost(ClientConnection conn, Channel ch) {
    String refused = conn.tlsRefusal();
    if (refused != null) {
      failLive(conn, ch, Status.FORBIDDEN, "TLS failed: " + refused);
      return;
    }
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
    // The client learns the seq finished before the future completes, so a call issued by a
    // thread that saw the completion already carries the advanced watermark.
    if (c.seq >= 0) {
      seqFinished.accept(c.seq);
    }
    if (err != null) {
      c.result.completeExceptionally(err);
    } else {
      c.result.complete(value);
    }
  }

  private void cleanup(ClientCall c) {
    if (c.seq >= 0) {
      seqFinished.accept(c.seq);
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

  /** Refuses new calls and fails the outstanding ones; returns false if already closed. */
  boolean close() {
    if (!closed.compareAndSet(false, true)) {
      return false;
    }
    // A call submitted concurrently is either seen here or sees the flag in submit().
    for (ClientCall c : outstanding) {
      finish(c, null, new IllegalStateException("the client is closed"));
    }
    return true;
  }
}
