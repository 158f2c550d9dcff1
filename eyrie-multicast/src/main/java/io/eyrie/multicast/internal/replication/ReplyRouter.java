package io.eyrie.multicast.internal.replication;

import java.util.concurrent.ScheduledExecutorService;
import java.util.TreeSet;
import java.util.Set;
import java.util.List;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.GroupId;
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
 *
 * <p>It is also the per-replica gate of design 4.3.1 rule 11: the executed reply of a message
 * with other destinations is handed to the client only once each of them has started the message
 * (a {@code StartedQuery} answered on positive evidence), whichever way the reply reached this
 * replica (the first record, a duplicate start, a snapshot). Until then the reply is held here.
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
  private final GroupId self;
  private final StartedChecker checker;
  private final ScheduledExecutorService retries;

  /** Asks a group which of some messages have started there (rule 11). */
  @FunctionalInterface
  public interface StartedChecker {
    /** The ids of {@code ids} that group {@code g} has started, on positive evidence. */
    CompletableFuture<Set<MsgId>> started(GroupId g, List<MsgId> ids);
  }

  /** A waiting request and when its message was last submitted (a {@link #nanoClock} time). */
  private static final class Waiter {
    final CompletableFuture<StoredReply> reply = new CompletableFuture<>();
    long submittedAt;
    /** The message's other destinations (the gate waits for each to start it). */
    GroupId[] others = new GroupId[0];
    /** The reply held by the gate, once it came. */
    StoredReply held;
    final TreeSet<GroupId> unstarted = new TreeSet<>();

    Waiter(long submittedAt) {
      this.submittedAt = submittedAt;
    }
  }

  /** A router of a group's replies with no gate (single-group use and tests). */
  public ReplyRouter() {
    this(RESUBMIT_AFTER_MS, System::nanoTime, null, (g, ids) -> CompletableFuture.completedFuture(Set.copyOf(ids)),
        null);
  }

  /** A router of group {@code self}'s replies whose gate asks {@code checker}, retrying on {@code retries}. */
  public ReplyRouter(GroupId self, StartedChecker checker, ScheduledExecutorService retries) {
    this(RESUBMIT_AFTER_MS, System::nanoTime, self, checker, retries);
  }

  ReplyRouter(long resubmitAfterMs, LongSupplier nanoClock) {
    this(resubmitAfterMs, nanoClock, null, (g, ids) -> CompletableFuture.completedFuture(Set.copyOf(ids)), null);
  }

  ReplyRouter(long resubmitAfterMs, LongSupplier nanoClock, GroupId self, StartedChecker checker,
      ScheduledExecutorService retries) {
    this.resubmitAfterNanos = TimeUnit.MILLISECONDS.toNanos(resubmitAfterMs);
    this.nanoClock = nanoClock;
    this.self = self;
    this.checker = checker;
    this.retries = retries;
  }

  /**
   * A request's wait for a reply.
   *
   * @param reply completed with the reply (shared by duplicate requests)
   * @param submit true if the caller must submit the message: no request for it was waiting on
   *     this node, or the last submission is older than {@link #RESUBMIT_AFTER_MS}
   */
  public record Wait(CompletableFuture<StoredReply> reply, boolean submit) {}

  /** Waits for the reply for a single-group message, and tells whether it must be submitted. */
  public Wait join(MsgId id) {
    return join(id, new GroupId[0]);
  }

  /**
   * Waits for the reply for a message to {@code dests}, and tells whether the message must be
   * submitted; the reply is held until every other destination started the message.
   */
  public Wait join(MsgId id, GroupId[] dests) {
    long now = nanoClock.getAsLong();
    boolean[] submit = new boolean[1];
    Waiter w = waiting.compute(id, (k, old) -> {
      if (old == null) {
        Waiter nw = new Waiter(now);
        if (dests != null && self != null) {
          nw.others = java.util.Arrays.stream(dests).filter(d -> !d.equals(self)).toArray(GroupId[]::new);
        }
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

  /**
   * Completes the requests waiting for a message, if any: at once for a single-group message or
   * a refusal (the message did not execute), after the gate for an executed multi-group one.
   */
  public void complete(MsgId id, StoredReply reply) {
    Waiter w = waiting.get(id);
    if (w == null) {
      return;
    }
    boolean executed = reply.status() == Status.OK || reply.status() == Status.ERROR;
    if (w.others.length == 0 || !executed) {
      if (waiting.remove(id, w)) {
        w.reply.complete(reply);
      }
      return;
    }
    synchronized (w) {
      if (w.held != null) {
        return; // the gate is already asking
      }
      w.held = reply;
      w.unstarted.addAll(java.util.Arrays.asList(w.others));
    }
    for (GroupId g : w.others) {
      if (retries == null) {
        ask(id, w, g, 1);
        continue;
      }
      // Never on the caller's thread: replies come from a group's apply thread, which holds that
      // group's lock, and a question to a replica on this node takes the other group's lock.
      try {
        retries.execute(() -> ask(id, w, g, 1));
      } catch (java.util.concurrent.RejectedExecutionException closing) {
        return;
      }
    }
  }

  private void ask(MsgId id, Waiter w, GroupId g, int attempt) {
    if (w.reply.isDone()) {
      return;
    }
    CompletableFuture<Set<MsgId>> f;
    try {
      f = checker.started(g, List.of(id));
    } catch (RuntimeException e) {
      f = CompletableFuture.failedFuture(e);
    }
    java.util.function.BiConsumer<Set<MsgId>, Throwable> answered = (started, e) -> {
      if (e == null && started.contains(id)) {
        boolean release;
        synchronized (w) {
          w.unstarted.remove(g);
          release = w.unstarted.isEmpty();
        }
        if (release && waiting.remove(id, w)) {
          w.reply.complete(w.held);
        }
        return;
      }
      if (retries == null || w.reply.isDone()) {
        return;
      }
      try {
        retries.schedule(() -> ask(id, w, g, attempt + 1), Math.min(50, attempt), TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.RejectedExecutionException closing) {
        // the node is closing
      }
    };
    // The answer may come on another group's apply thread: release the reply from the gate's own.
    if (retries == null) {
      f.whenComplete(answered);
    } else {
      f.whenCompleteAsync(answered, retries);
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
