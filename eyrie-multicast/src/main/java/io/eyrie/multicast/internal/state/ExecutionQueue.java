package io.eyrie.multicast.internal.state;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Deliverer;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.Wire;
import io.eyrie.multicast.internal.state.Inboxes.Inbox;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Execution at one group: the delivered messages in delivery order, run one at a time by the
 * application, and the head, which may be parked until items from other destinations arrive.
 * Owns the queue, the head's progress and its snapshot section, and runs a message through its
 * steps: first delivery, waits, resumes, completion. Kept apart because this
 * is where the application runs and where the order of execution is fixed: nothing here
 * reorders. Its parts: {@link Inboxes} (items buffered per message), {@link OffQueue} (messages
 * waiting with resumeLater, and blocked ones) and {@link ReplyRelease} (replies).
 */
final class ExecutionQueue {
  private static final Logger LOG = LoggerFactory.getLogger(ExecutionQueue.class);

  final GroupId self;
  private final Deliverer app;
  final Codec codec;
  final StateCounters stats;
  final Outboxes outboxes;
  final ClientTable clients;

  /** Delivered messages not yet fully executed; the head may be parked. */
  final ArrayDeque<Msg> queue = new ArrayDeque<>();
  /** Every message in progress here: in {@link #queue}, or off it in {@link #offQueue}. */
  final HashMap<MsgId, Msg> queued = new HashMap<>();
  boolean headStarted;
  TreeSet<GroupId> parkedOn;
  /** Items received for messages that have not finished executing here. */
  final Inboxes inboxes = new Inboxes();
  /** Messages that left the queue before they finished (resumeLater, blocked). */
  final OffQueue offQueue = new OffQueue(this);
  /** Replies recorded here. */
  final ReplyRelease replies;
  /** Items sent by executions so far (to tell whether a blocked delivery sent something). */
  long sends;

  /** Executes Eyrie's own messages (group changes), given the message: null for the application's. */
  Function<Wire.Start, Execution> system = s -> null;
  /** The partitions the group knows of (see {@link io.eyrie.multicast.ExecutionContext#partitions}). */
  Supplier<List<GroupId>> partitions = List::of;
  /** The open partitions (see {@link io.eyrie.multicast.ExecutionContext#openPartitions}). */
  Supplier<List<GroupId>> openPartitions = List::of;

  ExecutionQueue(GroupId self, Deliverer app, Codec codec, StateCounters stats, Outboxes outboxes,
      ClientTable clients, BiConsumer<MsgId, StoredReply> release) {
    this.self = self;
    this.app = app;
    this.codec = codec;
    this.stats = stats;
    this.outboxes = outboxes;
    this.clients = clients;
    this.replies = new ReplyRelease(codec, clients, release);
  }

  Msg queued(MsgId id) {
    return queued.get(id);
  }

  boolean isQueued(MsgId id) {
    return queued.containsKey(id);
  }

  /**
   * True if {@code m} has started here in the sense of design 4.3.1 rule 11: it is the head and
   * the application has seen it, or it waits off the queue to resume later. A deferred (blocked)
   * message has not started (K7).
   */
  boolean hasStarted(Msg m) {
    return m == queue.peek() ? headStarted : offQueue.later.containsKey(m.start.id());
  }

  /**
   * True if the application has already seen {@code m} (the head, a deferred message, or one
   * waiting with resumeLater).
   */
  boolean isStarted(Msg m) {
    // A deferred message counts as started: the application has seen it and may keep its
    // objects apart for it (Execution.blocked), so it must be delivered again, not dropped. One
    // waiting with resumeLater has started too, and may have sent items (review N4).
    return m == queue.peek() ? headStarted : offQueue.holds(m);
  }

  /** The messages delivered here whose execution has not finished (queued, deferred or resuming later). */
  int size() {
    return queue.size() + offQueue.size();
  }

  /** Appends a delivered message (run by the next {@link #run}). */
  void enqueue(Msg m) {
    queue.add(m);
    queued.put(m.start.id(), m);
  }

  /** Adds the clients of every message in progress here to {@code active}. */
  void addActiveClients(Set<Long> active) {
    for (MsgId id : queued.keySet()) {
      active.add(id.client());
    }
    for (MsgId id : inboxes.ids()) {
      active.add(id.client());
    }
  }

  /** Drops buffered items of a client below its new watermark, for messages not in progress. */
  void dropInboxesBelow(long client, long watermark, Predicate<MsgId> pending) {
    inboxes.dropBelow(client, watermark, id -> pending.test(id) || queued.containsKey(id));
  }

  /**
   * Runs the queue until it is empty or its head is parked, then gives the deferred messages
   * another chance if something completed since their last one.
   */
  void run() {
    runQueue();
    offQueue.startDeferred();
  }

  private void runQueue() {
    while (!queue.isEmpty()) {
      Msg m = queue.peek();
      Execution ex;
      ExecutionCtx ctx = new ExecutionCtx(this, m);
      if (!headStarted) {
        headStarted = true;
        ex = firstDelivery(m, ctx);
        if (ex.isBlocked()) {
          if (!offQueue.isEmpty()) {
            // Not started (no started-signal): delivered again after a completion here.
            queue.poll();
            headStarted = false;
            parkedOn = null;
            offQueue.defer(m);
            continue;
          }
          ex = Execution.error("the application blocked with no message in progress");
        }
      } else if (parkedOn != null && inboxes.satisfied(m.start.id(), parkedOn)) {
        ex = resume(ctx);
      } else {
        return;
      }
      if (ex.isAwait() || ex.isResumeLater()) {
        String bad = checkWait(m, ex);
        if (bad != null) {
          ex = Execution.error(bad);
        } else if (ex.isAwait()) {
          parkedOn = waitSet(ex);
          stats.parks++;
          continue;
        } else {
          queue.poll();
          headStarted = false;
          parkedOn = null;
          offQueue.waitLater(m, waitSet(ex));
          stats.parks++;
          offQueue.resumeIfReady(m.start.id());
          continue;
        }
      }
      finish(m, ex);
    }
  }

  /**
   * Hands a message to the application for the first time (again, for a deferred one): an error
   * instead if its id was reused with other content, or if the application sent items and then
   * answered blocked (what it sent says it started).
   */
  Execution firstDelivery(Msg m, ExecutionCtx ctx) {
    if (m.conflict) {
      // The other destinations of this version may wait for items from this group: tell them
      // that none will come (review N4).
      for (GroupId d : m.start.dests()) {
        if (!d.equals(self)) {
          outboxes.send(d, new Wire.Abandoned(m.start.id()));
        }
      }
      return Execution.error("message id " + m.start.id() + " was reused with other content; it was not executed");
    }
    long sent = sends;
    Execution ex = invoke(ctx, true);
    return ex.isBlocked() && sends != sent ? Execution.error("the application sent items and then blocked") : ex;
  }

  /** Resumes a message that waited; only a first delivery may answer blocked. */
  Execution resume(ExecutionCtx ctx) {
    Execution ex = invoke(ctx, false);
    return ex.isBlocked() ? Execution.error("only a delivery can block, not a resume") : ex;
  }

  /** The groups a wait the application asked for is on, this group left out. */
  TreeSet<GroupId> waitSet(Execution ex) {
    TreeSet<GroupId> on = new TreeSet<>(ex.awaited());
    on.remove(self);
    return on;
  }

  /** Why a wait the application asked for could never end, or null. */
  String checkWait(Msg m, Execution ex) {
    TreeSet<GroupId> on = waitSet(ex);
    if (on.isEmpty()) {
      return "a message cannot wait for its own group";
    }
    for (GroupId g : on) {
      if (Arrays.binarySearch(m.start.dests(), g) < 0) {
        // Only destinations send items for a message: the wait could never end.
        return "a message cannot wait for group " + g + ", which is not a destination";
      }
    }
    return null;
  }

  /**
   * Runs the application on a message. Whatever it throws becomes an error reply, Errors
   * included (an AssertionError or a LinkageError is as deterministic as the application): an
   * exception escaping apply would stop the Ratis server on every replica. A
   * {@link VirtualMachineError} (out of memory, stack overflow) is rethrown instead: it depends on
   * the replica, not on the log, so answering it could make replicas diverge. Decoding cannot
   * overflow the stack ({@link Codec#MAX_DEPTH}) nor allocate from a hostile declared size (it
   * fails with the same IllegalArgumentException on every replica; see {@link Codec}); deliverers
   * must not recurse without bound.
   */
  private Execution invoke(ExecutionCtx ctx, boolean first) {
    try {
      Execution ex = first ? system.apply(ctx.start()) : null;
      if (ex == null) {
        ex = first ? app.deliver(ctx) : app.resume(ctx);
      }
      return ex == null ? Execution.done() : ex;
    } catch (VirtualMachineError e) {
      throw e;
    } catch (Throwable e) {
      LOG.warn("{}: application failed on {}: {}", self, ctx.id(), e.toString());
      return Execution.error("application error: " + e);
    }
  }

  private void finish(Msg m, Execution ex) {
    queue.poll();
    headStarted = false;
    parkedOn = null;
    complete(m, ex);
    if (!offQueue.later.isEmpty()) {
      offQueue.wakeLater();
    }
  }

  /** Ends a message's execution here: drops its items and records (and maybe releases) its reply. */
  void complete(Msg m, Execution ex) {
    MsgId id = m.start.id();
    queued.remove(id);
    stats.executed++;
    offQueue.completed();
    inboxes.remove(id);
    if (self.equals(m.start.replyGroup())) {
      replies.record(m, ex);
    }
  }

  /**
   * Takes a Data item from another destination of a message.
   *
   * @param pendingHere whether the message is pending (not yet delivered) here
   */
  void receive(GroupId from, MsgId id, byte[] value, boolean pendingHere) {
    // Another destination sends items for a message only once it has delivered it, which needed
    // this group's proposal: the message is pending or queued here, or it finished here. An item
    // for a message that is neither is late and is dropped (even if the client's record, which
    // would tell that it finished, expired or was recreated since).
    if (!pendingHere && !queued.containsKey(id)) {
      return;
    }
    inboxes.add(from, id, value, true);
    itemArrived(id);
  }

  /** Gives a message that waits for items (off the queue, or parked at its head) its chance. */
  private void itemArrived(MsgId id) {
    if (offQueue.later.containsKey(id)) {
      offQueue.resumeIfReady(id);
      offQueue.startDeferred();
      return;
    }
    Msg head = queue.peek();
    if (head != null && head.start.id().equals(id) && parkedOn != null) {
      run();
    }
  }

  /**
   * Takes another destination's word that it ended a message without executing it ({@link
   * Wire.Abandoned}), for a message that has started here: an item without value from that group
   * joins the message's items, so a wait for that group ends, and the application, when it runs
   * again, sees the group in {@link io.eyrie.multicast.ExecutionContext#abandonedBy} (reading its
   * items throws).
   */
  void abandonedBy(GroupId from, MsgId id) {
    inboxes.addAbandoned(from, id);
    itemArrived(id);
  }

  void describeTo(StringBuilder b) {
    Msg head = queue.peek();
    if (head != null) {
      Inbox in = inboxes.get(head.start.id());
      b.append("  head ").append(head.start.id()).append(" dests=").append(Arrays.toString(head.start.dests()))
          .append(" started=").append(headStarted).append(" parkedOn=").append(parkedOn)
          .append(" heard=").append(in == null ? "[]" : in.heard).append(" data=")
          .append(in == null ? "{}" : in.data.keySet()).append('\n');
    }
    offQueue.describeTo(b);
  }

  /**
   * Writes the queue and the head's progress, then the parts' sections: the messages resuming
   * later, the inboxes and the deferred messages.
   */
  void writeTo(Output out) {
    out.writeVarInt(queue.size(), true);
    for (Msg m : queue) {
      m.writeTo(out, codec);
    }
    out.writeBoolean(headStarted);
    SnapshotIo.writeGroups(out, parkedOn);
    offQueue.writeLaterTo(out, codec);
    inboxes.writeTo(out);
    offQueue.writeDeferredTo(out, codec);
  }

  void readFrom(Input in) {
    int n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      enqueue(Msg.readFrom(in, codec));
    }
    headStarted = in.readBoolean();
    parkedOn = SnapshotIo.readGroups(in);
    offQueue.readLaterFrom(in, codec);
    inboxes.readFrom(in);
    offQueue.readDeferredFrom(in, codec);
  }
}
