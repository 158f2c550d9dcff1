package io.eyrie.multicast.internal;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Deliverer;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.GroupState.Reply;
import io.eyrie.multicast.internal.Wire.Started;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BiConsumer;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Execution at one group: the delivered messages in delivery order, run one at a time by the
 * application; the head may be parked until items from other destinations arrive. Owns the items
 * buffered for messages that have not finished here, and the replies recorded here that wait for
 * the other destinations' started-signals before they are released. Kept apart because this is
 * where the application runs and where the order of execution is fixed: nothing here reorders.
 */
final class ExecutionQueue {
  private static final Logger LOG = LoggerFactory.getLogger(ExecutionQueue.class);

  final GroupId self;
  private final Deliverer app;
  final Codec codec;
  private final GroupState.Stats stats;
  final Outboxes outboxes;
  final ClientTable clients;
  /** Releases a final reply (to the listener of the moment). */
  private final BiConsumer<MsgId, Reply> release;

  /** Delivered messages not yet fully executed; the head may be parked. */
  final ArrayDeque<Msg> queue = new ArrayDeque<>();
  final HashMap<MsgId, Msg> queued = new HashMap<>();
  boolean headStarted;
  TreeSet<GroupId> parkedOn;
  /** Items received for messages that have not finished executing here. */
  final HashMap<MsgId, Inbox> inboxes = new HashMap<>();
  /** Replies recorded here but waiting for the other destinations' started-signals. */
  final HashMap<MsgId, TreeSet<GroupId>> awaitingStarts = new HashMap<>();
  /**
   * Messages that left the queue with {@link Execution#resumeLater}, and the groups each waits
   * for; they stay in {@link #queued} (in progress) until they complete.
   */
  final TreeMap<MsgId, Later> later = new TreeMap<>();
  /** Set by the head's context when it sends to the reply group (which then needs no Started). */
  boolean sentToReplyGroup;
  /**
   * Messages the application could not start yet ({@link Execution#blocked}), in delivery order:
   * they left the queue without a started-signal and stay in {@link #queued} (in progress); each
   * is delivered again, in this order, after a message completes here.
   */
  final ArrayList<Msg> deferred = new ArrayList<>();
  /** Items sent by executions so far (to tell whether a blocked delivery sent something). */
  long sends;
  /** Messages that completed here so far. */
  private long completions;
  /** {@link #completions} when the deferred messages were last delivered again. */
  private long deferredTried = -1;

  /** Executes Eyrie's own messages (group changes), given the message: null for the application's. */
  java.util.function.Function<Wire.Start, Execution> system = s -> null;
  /** The partitions the group knows of (see {@link io.eyrie.multicast.ExecutionContext#partitions}). */
  java.util.function.Supplier<List<GroupId>> partitions = List::of;
  /** The open partitions (see {@link io.eyrie.multicast.ExecutionContext#openPartitions}). */
  java.util.function.Supplier<List<GroupId>> openPartitions = List::of;

  ExecutionQueue(GroupId self, Deliverer app, Codec codec, GroupState.Stats stats, Outboxes outboxes,
      ClientTable clients, BiConsumer<MsgId, Reply> release) {
    this.self = self;
    this.app = app;
    this.codec = codec;
    this.stats = stats;
    this.outboxes = outboxes;
    this.clients = clients;
    this.release = release;
  }

  /** The items received for one message, and which destinations were heard from. */
  static final class Inbox {
    final TreeSet<GroupId> heard = new TreeSet<>();
    /** The encoded items, per sender (decoded when the application reads them). */
    final TreeMap<GroupId, List<byte[]>> data = new TreeMap<>();
  }

  /** A message resumed out of queue order once an item from each group has arrived. */
  static final class Later {
    final Msg m;
    TreeSet<GroupId> on;

    Later(Msg m, TreeSet<GroupId> on) {
      this.m = m;
      this.on = on;
    }
  }

  Msg queued(MsgId id) {
    return queued.get(id);
  }

  boolean isQueued(MsgId id) {
    return queued.containsKey(id);
  }

  boolean isAwaitingStarts(MsgId id) {
    return awaitingStarts.containsKey(id);
  }

  /**
   * True if the application has already seen {@code m} (the head, a deferred message, or one
   * waiting with resumeLater).
   */
  boolean isStarted(Msg m) {
    // A deferred message counts as started: the application has seen it and may keep its
    // objects apart for it (Execution.blocked), so it must be delivered again, not dropped. One
    // waiting with resumeLater has started too, and may have sent items (review N4).
    return m == queue.peek() ? headStarted : deferred.contains(m) || later.get(m.start.id()) != null;
  }

  /** The messages delivered here whose execution has not finished (queued, deferred or resuming later). */
  int size() {
    return queue.size() + deferred.size() + later.size();
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
    for (MsgId id : awaitingStarts.keySet()) {
      active.add(id.client());
    }
    for (MsgId id : inboxes.keySet()) {
      active.add(id.client());
    }
  }

  /** Drops buffered items of a client below its new watermark, for messages not in progress. */
  void dropInboxesBelow(long client, long watermark, Predicate<MsgId> pending) {
    inboxes.keySet().removeIf(id -> id.client() == client && id.seq() < watermark
        && !pending.test(id) && !queued.containsKey(id));
  }

  /**
   * Runs the queue until it is empty or its head is parked, then gives the deferred messages
   * another chance if something completed since their last one.
   */
  void run() {
    runQueue();
    startDeferred();
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
          if (!later.isEmpty() || !deferred.isEmpty()) {
            // Not started (no started-signal): delivered again after a completion here.
            queue.poll();
            headStarted = false;
            parkedOn = null;
            deferred.add(m);
            continue;
          }
          ex = Execution.error("the application blocked with no message in progress");
        }
        signalStarted(m);
      } else if (parkedOn != null && satisfied(m.start.id(), parkedOn)) {
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
          later.put(m.start.id(), new Later(m, waitSet(ex)));
          stats.parks++;
          resumeIfReady(m.start.id());
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
  private Execution firstDelivery(Msg m, ExecutionCtx ctx) {
    sentToReplyGroup = false;
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

  /** Tells the reply group that {@code m} started here, unless an item sent to it already did. */
  private void signalStarted(Msg m) {
    if (!self.equals(m.start.replyGroup()) && !sentToReplyGroup) {
      outboxes.send(m.start.replyGroup(), new Started(m.start.id()));
    }
  }

  /** Resumes a message that waited; only a first delivery may answer blocked. */
  private Execution resume(ExecutionCtx ctx) {
    Execution ex = invoke(ctx, false);
    return ex.isBlocked() ? Execution.error("only a delivery can block, not a resume") : ex;
  }

  /**
   * Delivers the deferred messages again, in delivery order, while messages complete here. One
   * that starts now is handled as a head would be (its started-signal, its reply or error), except
   * that a wait never parks the queue: it waits as with {@link Execution#resumeLater}.
   */
  private void startDeferred() {
    while (!deferred.isEmpty() && deferredTried != completions) {
      deferredTried = completions;
      for (java.util.Iterator<Msg> it = deferred.iterator(); it.hasNext(); ) {
        Msg m = it.next();
        Execution ex = firstDelivery(m, new ExecutionCtx(this, m));
        if (ex.isBlocked()) {
          continue;
        }
        it.remove();
        signalStarted(m);
        if (ex.isAwait() || ex.isResumeLater()) {
          String bad = checkWait(m, ex);
          if (bad == null) {
            later.put(m.start.id(), new Later(m, waitSet(ex)));
            stats.parks++;
            continue;
          }
          ex = Execution.error(bad);
        }
        complete(m, ex);
      }
      // Items may already be here for the messages that now wait (sent before they started).
      wakeLater();
      if (later.isEmpty() && !deferred.isEmpty() && deferredTried == completions) {
        // Every deferred message is still blocked and nothing is in progress that could let one
        // start: the application broke its promise; the first one ends with an error rather than
        // all of them waiting for ever.
        Msg m = deferred.remove(0);
        sentToReplyGroup = false;
        signalStarted(m);
        complete(m, Execution.error("the application blocked with no message in progress"));
      }
    }
  }

  private TreeSet<GroupId> waitSet(Execution ex) {
    TreeSet<GroupId> on = new TreeSet<>(ex.awaited());
    on.remove(self);
    return on;
  }

  /** Why a wait the application asked for could never end, or null. */
  private String checkWait(Msg m, Execution ex) {
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
   * Resumes a message waiting with resumeLater if an item from each awaited group is here. If
   * the application answers resumeLater again, the message waits until another item arrives for
   * it or another message completes here (which may be what it waits for).
   */
  private void resumeIfReady(MsgId id) {
    if (tryResume(id)) {
      wakeLater();
    }
  }

  /** Invokes a satisfied later message once; true if it completed. */
  private boolean tryResume(MsgId id) {
    Later l = later.get(id);
    if (l == null || !satisfied(id, l.on)) {
      return false;
    }
    Execution ex = resume(new ExecutionCtx(this, l.m));
    if (ex.isAwait() || ex.isResumeLater()) {
      String bad = checkWait(l.m, ex);
      if (bad == null) {
        l.on = waitSet(ex);
        return false;
      }
      ex = Execution.error(bad);
    }
    later.remove(id);
    complete(l.m, ex);
    return true;
  }

  /**
   * After a completion, gives every later message whose items are all here another chance, in
   * id order, until a pass completes none (each completion may unblock others).
   */
  private void wakeLater() {
    boolean progress = true;
    while (progress && !later.isEmpty()) {
      progress = false;
      for (MsgId id : new ArrayList<>(later.keySet())) {
        progress |= tryResume(id);
      }
    }
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

  private boolean satisfied(MsgId id, Set<GroupId> from) {
    Inbox in = inboxes.get(id);
    if (in == null) {
      return false;
    }
    for (GroupId g : from) {
      List<byte[]> items = in.data.get(g);
      if (items == null || items.isEmpty()) {
        return false;
      }
    }
    return true;
  }

  private void finish(Msg m, Execution ex) {
    queue.poll();
    headStarted = false;
    parkedOn = null;
    complete(m, ex);
    if (!later.isEmpty()) {
      wakeLater();
    }
  }

  /** Ends a message's execution here: drops its items and records (and maybe releases) its reply. */
  private void complete(Msg m, Execution ex) {
    MsgId id = m.start.id();
    queued.remove(id);
    stats.executed++;
    completions++;
    Inbox in = inboxes.remove(id);
    if (!self.equals(m.start.replyGroup())) {
      return;
    }
    Reply r;
    if (ex.isError()) {
      r = new Reply(GroupState.ERROR, null, ex.errorMessage());
    } else {
      byte[] body;
      try {
        body = codec.encode(ex.replyValue());
      } catch (VirtualMachineError e) {
        throw e;
      } catch (Throwable e) {
        // Unregistered, nested too deep, or an application serializer failed (see invoke).
        body = null;
      }
      r = body == null ? new Reply(GroupState.ERROR, null, "reply is not encodable: "
          + ex.replyValue().getClass().getName()) : new Reply(GroupState.OK, body, null);
    }
    clients.touch(id.client()).replies.put(id, r);
    TreeSet<GroupId> waiting = new TreeSet<>();
    // A conflicting message ran nowhere it was marked, and other versions may have other
    // destinations: no started-signal to wait for.
    for (GroupId d : m.conflict ? new GroupId[0] : m.start.dests()) {
      if (!d.equals(self) && (in == null || !in.heard.contains(d))) {
        waiting.add(d);
      }
    }
    if (waiting.isEmpty()) {
      release.accept(id, r);
    } else {
      awaitingStarts.put(id, waiting);
    }
  }

  /**
   * Takes an item (a Data value, or a started-signal when {@code isData} is false) from another
   * destination of a message.
   *
   * @param pendingHere whether the message is pending (not yet delivered) here
   */
  void receive(GroupId from, MsgId id, byte[] value, boolean isData, boolean pendingHere) {
    TreeSet<GroupId> waiting = awaitingStarts.get(id);
    if (waiting != null) {
      waiting.remove(from);
      if (waiting.isEmpty()) {
        awaitingStarts.remove(id);
        Reply r = clients.reply(id);
        if (r != null) {
          release.accept(id, r);
        }
      }
      return;
    }
    // Another destination sends items for a message only once it has delivered it, which needed
    // this group's proposal: the message is pending or queued here, or it finished here. An item
    // for a message that is neither is late and is dropped (even if the client's record, which
    // would tell that it finished, expired or was recreated since).
    if (!pendingHere && !queued.containsKey(id)) {
      return;
    }
    Inbox in = inboxes.computeIfAbsent(id, k -> new Inbox());
    in.heard.add(from);
    if (isData) {
      in.data.computeIfAbsent(from, k -> new ArrayList<>()).add(value);
    }
    itemArrived(id);
  }

  /** Gives a message that waits for items (off the queue, or parked at its head) its chance. */
  private void itemArrived(MsgId id) {
    if (later.containsKey(id)) {
      resumeIfReady(id);
      startDeferred();
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
    Inbox in = inboxes.computeIfAbsent(id, k -> new Inbox());
    in.data.computeIfAbsent(from, k -> new ArrayList<>()).add(null);
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
    if (!deferred.isEmpty()) {
      b.append("  deferred ").append(deferred.size()).append(", first ").append(deferred.get(0).start.id()).append('\n');
    }
    int n = 0;
    for (var e : later.entrySet()) {
      if (n++ == 3) {
        break;
      }
      b.append("  resumes later ").append(e.getKey()).append(" on ").append(e.getValue().on).append('\n');
    }
    n = 0;
    for (var e : awaitingStarts.entrySet()) {
      if (n++ == 3) {
        break;
      }
      b.append("  awaiting starts ").append(e.getKey()).append(" from ").append(e.getValue()).append('\n');
    }
  }

  /** Writes the queue, the head's progress, the inboxes and the awaited started-signals. */
  void writeTo(Output out) {
    out.writeVarInt(queue.size(), true);
    for (Msg m : queue) {
      m.writeTo(out, codec);
    }
    out.writeBoolean(headStarted);
    SnapshotIo.writeGroups(out, parkedOn);
    out.writeVarInt(later.size(), true);
    for (Later l : later.values()) {
      l.m.writeTo(out, codec);
      SnapshotIo.writeGroups(out, l.on);
    }
    out.writeVarInt(inboxes.size(), true);
    for (MsgId id : new TreeSet<>(inboxes.keySet())) {
      Inbox in = inboxes.get(id);
      SnapshotIo.writeId(out, id);
      SnapshotIo.writeGroups(out, in.heard);
      out.writeVarInt(in.data.size(), true);
      for (Map.Entry<GroupId, List<byte[]>> e : in.data.entrySet()) {
        out.writeString(e.getKey().name());
        out.writeVarInt(e.getValue().size(), true);
        for (byte[] b : e.getValue()) {
          SnapshotIo.writeBytes(out, b);
        }
      }
    }
    out.writeVarInt(awaitingStarts.size(), true);
    for (MsgId id : new TreeSet<>(awaitingStarts.keySet())) {
      SnapshotIo.writeId(out, id);
      SnapshotIo.writeGroups(out, awaitingStarts.get(id));
    }
    out.writeVarInt(deferred.size(), true);
    for (Msg m : deferred) {
      m.writeTo(out, codec);
    }
  }

  void readFrom(Input in) {
    int n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      enqueue(Msg.readFrom(in, codec));
    }
    headStarted = in.readBoolean();
    parkedOn = SnapshotIo.readGroups(in);
    n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      Msg m = Msg.readFrom(in, codec);
      later.put(m.start.id(), new Later(m, SnapshotIo.readGroups(in)));
      queued.put(m.start.id(), m);
    }
    n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      MsgId id = SnapshotIo.readId(in);
      Inbox box = new Inbox();
      box.heard.addAll(SnapshotIo.readGroups(in));
      int k = in.readVarInt(true);
      for (int j = 0; j < k; j++) {
        GroupId g = GroupId.valueOf(in.readString());
        int c = in.readVarInt(true);
        List<byte[]> items = new ArrayList<>(c);
        for (int x = 0; x < c; x++) {
          items.add(SnapshotIo.readBytes(in));
        }
        box.data.put(g, items);
      }
      inboxes.put(id, box);
    }
    n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      awaitingStarts.put(SnapshotIo.readId(in), SnapshotIo.readGroups(in));
    }
    n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      Msg m = Msg.readFrom(in, codec);
      deferred.add(m);
      queued.put(m.start.id(), m);
    }
  }
}
