package io.eyrie.multicast.internal.replication;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.LeaderSteppingDownException;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a node sends writes to one group: straight to its own replica when that replica leads the
 * group, otherwise through a Ratis client that is replaced after a failure (Ratis's ordered async
 * requests travel in a sliding window that stays closed once a request has failed for good, so
 * every later request on that client would fail too).
 *
 * <p>The local path hands the request to the Ratis server in this process: no client-side
 * sliding window, no protobuf encoding and decoding, no Netty round trip, and no event-loop
 * thread of the server blocked until the entry commits. It is the same request to the same
 * leader, so what the group applies is the same; a replica that is not (or no longer) the ready
 * leader refuses before appending anything, and the request then goes through the client.
 */
final class RaftClientHolder implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RaftClientHolder.class);

  /** Client id of this process's local submissions (the Ratis retry cache keys on it and the call id). */
  private static final ClientId LOCAL_CLIENT = ClientId.randomId();
  private static final AtomicLong LOCAL_CALLS = new AtomicLong();
  private static final java.util.concurrent.ExecutorService REPLIES =
      java.util.concurrent.Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "eyrie-local-replies");
        t.setDaemon(true);
        return t;
      });

  private final Supplier<RaftClient> factory;
  private final Supplier<RaftServer.Division> local;
  private final long localTimeoutMs;
  private final AtomicLong localWrites = new AtomicLong();
  private RaftClient client;
  private boolean closed;

  RaftClientHolder(Supplier<RaftClient> factory) {
    this(factory, () -> null, 0);
  }

  /** A holder that submits to {@code local} when {@link NodeOptions#localSubmit()} is on. */
  RaftClientHolder(Supplier<RaftClient> factory, Supplier<RaftServer.Division> local, io.eyrie.multicast.NodeOptions o) {
    this(factory, o.localSubmit() ? local : () -> null, o.ratisRequestTimeoutMs());
  }

  /**
   * @param local this node's replica of the group, or null when it hosts none
   * @param localTimeoutMs how long a local write may take before it counts as failed (as a
   *     client request times out)
   */
  RaftClientHolder(Supplier<RaftClient> factory, Supplier<RaftServer.Division> local, long localTimeoutMs) {
    this.factory = factory;
    this.local = local;
    this.localTimeoutMs = localTimeoutMs;
  }

  /** Writes the local replica took (not sent through the client) so far. */
  long localWrites() {
    return localWrites.get();
  }

  /**
   * Sends a write to the group and completes with its reply; a failed client is replaced. Never
   * throws: problems complete the future exceptionally.
   */
  CompletableFuture<RaftClientReply> send(Message m) {
    return send(m, false);
  }

  /**
   * Sends a linearizable read-only query to the group, as {@link #send(Message)} sends a write:
   * to the local replica when it is the ready leader (which answers it with its read index, as
   * for a client's query), else through the client.
   */
  CompletableFuture<RaftClientReply> sendReadOnly(Message m) {
    return send(m, true);
  }

  private CompletableFuture<RaftClientReply> send(Message m, boolean read) {
    RaftServer.Division d = local.get();
    if (d != null && d.getInfo().isLeader() && d.getInfo().isLeaderReady()) {
      RaftClientRequest request = RaftClientRequest.newBuilder()
          .setClientId(LOCAL_CLIENT)
          .setServerId(d.getId())
          .setGroupId(d.getGroup().getGroupId())
          .setCallId(LOCAL_CALLS.incrementAndGet())
          .setMessage(m)
          .setType(read ? RaftClientRequest.readRequestType() : RaftClientRequest.writeRequestType())
          .build();
      CompletableFuture<RaftClientReply> f;
      try {
        f = d.getRaftServer().submitClientRequestAsync(request);
      } catch (IOException | RuntimeException e) {
        return viaClient(m, read);
      }
      // Callers continue on a thread of their own, as they do after a client's reply: Ratis
      // completes the future on the group's apply thread, which must not wait for other groups'
      // locks or submit new entries.
      return f.orTimeout(localTimeoutMs, TimeUnit.MILLISECONDS).handleAsync((r, e) -> {
        // A write that may have been appended is not sent again. A read changes nothing, so any
        // failure but the application's refusal is tried again through the client, which retries
        // other replicas as it does for any query.
        if (read ? failedRead(r, e) : e == null && notAppended(r)) {
          return viaClient(m, read);
        }
        if (!read) {
          localWrites.incrementAndGet();
        }
        return e != null ? CompletableFuture.<RaftClientReply>failedFuture(e) : CompletableFuture.completedFuture(r);
      }, REPLIES).thenCompose(x -> x);
    }
    return viaClient(m, read);
  }

  /**
   * A read the group's leader answers from its applied state without a ReadIndex round, always
   * through the Ratis client (in-process answers are the caller's business).
   */
  CompletableFuture<RaftClientReply> sendNonLinearizable(Message m) {
    return viaClient(m, true, c -> c.async().sendReadOnlyNonLinearizable(m));
  }

  /** True if this node's replica of the group is its ready leader, so a write would be taken here. */
  boolean leadsLocally() {
    RaftServer.Division d = local.get();
    return d != null && d.getInfo().isLeader() && d.getInfo().isLeaderReady();
  }

  /** True if a read failed for another reason than the application refusing it. */
  private static boolean failedRead(RaftClientReply r, Throwable e) {
    return e != null || !r.isSuccess() && !(r.getException() instanceof StateMachineException);
  }

  /** True if the replica refused before appending: it is not the ready leader. */
  private static boolean notAppended(RaftClientReply r) {
    return !r.isSuccess() && (r.getNotLeaderException() != null
        || r.getException() instanceof LeaderNotReadyException || r.getException() instanceof LeaderSteppingDownException);
  }

  private CompletableFuture<RaftClientReply> viaClient(Message m, boolean read) {
    return viaClient(m, read, c -> read ? c.async().sendReadOnly(m) : c.async().send(m));
  }

  private CompletableFuture<RaftClientReply> viaClient(Message m, boolean read,
      java.util.function.Function<RaftClient, CompletableFuture<RaftClientReply>> call) {
    RaftClient c;
    try {
      c = get();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    try {
      return call.apply(c).whenComplete((reply, err) -> {
        if (err != null || !read && !reply.isSuccess()) {
          // Also for a failed write's reply (not only an exception): an ordered Ratis client
          // whose request failed for good may refuse every later one, so start afresh. (A query
          // the application refused is a failed reply too, and says nothing about the client.)
          failed(c);
        }
      });
    } catch (RuntimeException e) {
      failed(c);
      return CompletableFuture.failedFuture(e);
    }
  }


  /** Returns the current client, creating it if needed. */
  synchronized RaftClient get() {
    if (closed) {
      throw new IllegalStateException("closed");
    }
    if (client == null) {
      client = factory.get();
    }
    return client;
  }

  /**
   * Drops the client if it is the one that failed; the next {@link #get()} builds a new one.
   * Callers are usually Ratis or Netty callback threads, and closing a Ratis client waits for
   * its connections to close (up to seconds), so the old client is closed in the background.
   */
  void failed(RaftClient failed) {
    RaftClient drop = null;
    synchronized (this) {
      if (client == failed) {
        drop = client;
        client = null;
      }
    }
    if (drop != null) {
      RaftClient c = drop;
      CLOSER.execute(() -> closeQuietly(c));
    }
  }

  private static final java.util.concurrent.ExecutorService CLOSER =
      java.util.concurrent.Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "eyrie-raft-client-closer");
        t.setDaemon(true);
        return t;
      });

  @Override
  public void close() {
    RaftClient drop;
    synchronized (this) {
      closed = true;
      drop = client;
      client = null;
    }
    closeQuietly(drop);
  }

  private static void closeQuietly(RaftClient c) {
    if (c == null) {
      return;
    }
    try {
      c.close();
    } catch (IOException | RuntimeException e) {
      LOG.debug("closing a Ratis client: {}", e.toString());
    }
  }
}
