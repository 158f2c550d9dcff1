package io.eyrie.multicast.internal.replication;

import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.state.StoredReply;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Client requests waiting, on one node, for the local replica of their reply group to answer.
 * Local and not replicated: after a restart, clients resend and are answered from the replicated
 * reply table.
 */
public final class ReplyRouter {
  private static final long WAIT_LIMIT_MS = 120_000;

  /**
   * How long a submission covers the resends of its message. A resend within this time joins
   * the waiting request (under overload, submitting again would only add work). A later resend
   * is submitted again: the first submission may have been applied while this node's replica
   * skipped it (it installed a snapshot past it), so its reply never reaches the waiter here,
   * while a new submission is answered from the reply table (the groups drop duplicates). Longer
   * than a client's first attempt timeout (3 s by default), far below its total timeout (30 s).
   */
  static final long RESUBMIT_AFTER_MS = 5_000;

  private final ConcurrentHashMap<MsgId, Waiter> waiting = new ConcurrentHashMap<>();
  private final long resubmitAfterNanos;
  private final LongSupplier nanoClock;

  /** A waiting request and when its message was last submitted (a {@link #nanoClock} time). */
  private static final class Waiter {
    final CompletableFuture<StoredReply> reply = new CompletableFuture<>();
    long submittedAt;

    Waiter(long submittedAt) {
      this.submittedAt = submittedAt;
    }
  }

  /** A router that resubmits resends after {@link #RESUBMIT_AFTER_MS}. */
  public ReplyRouter() {
    this(RESUBMIT_AFTER_MS, System::nanoTime);
  }

  ReplyRouter(long resubmitAfterMs, LongSupplier nanoClock) {
    this.resubmitAfterNanos = TimeUnit.MILLISECONDS.toNanos(resubmitAfterMs);
    this.nanoClock = nanoClock;
  }

  /**
   * A request's wait for a reply.
   *
   * @param reply completed with the reply (shared by duplicate requests)
   * @param submit true if the caller must submit the message: no request for it was waiting on
   *     this node, or the last submission is older than {@link #RESUBMIT_AFTER_MS}
   */
  public record Wait(CompletableFuture<StoredReply> reply, boolean submit) {}

  /** Waits for the reply for a message, and tells whether the message must be submitted. */
  public Wait join(MsgId id) {
    long now = nanoClock.getAsLong();
    boolean[] submit = new boolean[1];
    Waiter w = waiting.compute(id, (k, old) -> {
      if (old == null) {
        Waiter nw = new Waiter(now);
        nw.reply.orTimeout(WAIT_LIMIT_MS, TimeUnit.MILLISECONDS).whenComplete((r, e) -> waiting.remove(k, nw));
        submit[0] = true;
        return nw;
      }
      if (now - old.submittedAt >= resubmitAfterNanos) {
        old.submittedAt = now;
        submit[0] = true;
      }
      return old;
    });
    return new Wait(w.reply, submit[0]);
  }

  /** Completes the requests waiting for a message, if any. */
  public void complete(MsgId id, StoredReply reply) {
    Waiter w = waiting.remove(id);
    if (w != null) {
      w.reply.complete(reply);
    }
  }

  /** Fails a request whose message could not be submitted. */
  public void fail(MsgId id, Throwable t) {
    Waiter w = waiting.remove(id);
    if (w != null) {
      w.reply.completeExceptionally(t);
    }
  }

  /** Fails every waiting request (the node is closing). */
  public void failAll() {
    IllegalStateException closing = new IllegalStateException("node closed");
    waiting.values().forEach(w -> w.reply.completeExceptionally(closing));
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
