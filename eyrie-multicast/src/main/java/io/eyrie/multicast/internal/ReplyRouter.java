package io.eyrie.multicast.internal;

import io.eyrie.multicast.MsgId;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Client requests waiting, on one node, for the local replica of their reply group to answer.
 * Local and not replicated: after a restart, clients resend and are answered from the replicated
 * reply table.
 */
public final class ReplyRouter {
  private static final long WAIT_LIMIT_MS = 120_000;

  private final ConcurrentHashMap<MsgId, CompletableFuture<GroupState.Reply>> waiting = new ConcurrentHashMap<>();

  /**
   * A request's wait for a reply.
   *
   * @param reply completed with the reply (shared by duplicate requests)
   * @param first true if no request for the message was waiting on this node before
   */
  public record Wait(CompletableFuture<GroupState.Reply> reply, boolean first) {}

  /** Waits for the reply for a message, and tells whether a request for it was waiting already. */
  public Wait join(MsgId id) {
    boolean[] created = new boolean[1];
    CompletableFuture<GroupState.Reply> f = waiting.computeIfAbsent(id, k -> {
      CompletableFuture<GroupState.Reply> nf = new CompletableFuture<>();
      nf.orTimeout(WAIT_LIMIT_MS, TimeUnit.MILLISECONDS).whenComplete((r, e) -> waiting.remove(k, nf));
      created[0] = true;
      return nf;
    });
    return new Wait(f, created[0]);
  }

  /** Completes the requests waiting for a message, if any. */
  public void complete(MsgId id, GroupState.Reply reply) {
    CompletableFuture<GroupState.Reply> f = waiting.remove(id);
    if (f != null) {
      f.complete(reply);
    }
  }

  /** Fails a request whose message could not be submitted. */
  public void fail(MsgId id, Throwable t) {
    CompletableFuture<GroupState.Reply> f = waiting.remove(id);
    if (f != null) {
      f.completeExceptionally(t);
    }
  }

  /** Fails every waiting request (the node is closing). */
  public void failAll() {
    IllegalStateException closing = new IllegalStateException("node closed");
    waiting.values().forEach(f -> f.completeExceptionally(closing));
    waiting.clear();
  }

  /** True if a request waits here for the message's reply (for diagnosis). */
  public boolean isWaiting(MsgId id) {
    return waiting.containsKey(id);
  }

  /** Returns the number of waiting messages. */
  public int size() {
    return waiting.size();
  }
}
