package io.eyrie.multicast.internal.state;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The messages that left an {@link ExecutionQueue} before they finished: those waiting with
 * {@link Execution#resumeLater} for items from other destinations, resumed out of queue order
 * once the items are here, and those the application could not start yet ({@link
 * Execution#blocked}), delivered again in delivery order after a message completes here. Both
 * stay in progress in the queue ({@code queued}) until they complete. Owns both sets and their
 * parts of the queue's snapshot section; runs them through the queue's delivery, resume and
 * completion steps.
 */
final class OffQueue {
  private final ExecutionQueue q;

  /** Messages waiting with resumeLater, by id, and the groups each waits for. */
  final TreeMap<MsgId, Later> later = new TreeMap<>();
  /**
   * Messages the application could not start yet, in delivery order: they left the queue without
   * a started-signal; each is delivered again, in this order, after a message completes here.
   */
  final ArrayList<Msg> deferred = new ArrayList<>();
  /** Messages that completed here so far. */
  private long completions;
  /** {@link #completions} when the deferred messages were last delivered again. */
  private long deferredTried = -1;

  OffQueue(ExecutionQueue q) {
    this.q = q;
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

  /** True if a message waits here (deferred, or resuming later). */
  boolean holds(Msg m) {
    return deferred.contains(m) || later.get(m.start.id()) != null;
  }

  boolean isEmpty() {
    return later.isEmpty() && deferred.isEmpty();
  }

  int size() {
    return deferred.size() + later.size();
  }

  /** Counts a completion here (which may let a deferred message start). */
  void completed() {
    completions++;
  }

  /** Takes a message that started and waits for items from {@code on}, off the queue. */
  void waitLater(Msg m, TreeSet<GroupId> on) {
    later.put(m.start.id(), new Later(m, on));
  }

  /** Takes a message that could not start yet. */
  void defer(Msg m) {
    deferred.add(m);
  }

  /**
   * Delivers the deferred messages again, in delivery order, while messages complete here. One
   * that starts now is handled as a head would be (its started-signal, its reply or error), except
   * that a wait never parks the queue: it waits as with {@link Execution#resumeLater}.
   */
  void startDeferred() {
    while (!deferred.isEmpty() && deferredTried != completions) {
      deferredTried = completions;
      for (Iterator<Msg> it = deferred.iterator(); it.hasNext(); ) {
        Msg m = it.next();
        Execution ex = q.firstDelivery(m, new ExecutionCtx(q, m));
        if (ex.isBlocked()) {
          continue;
        }
        it.remove();
        if (ex.isAwait() || ex.isResumeLater()) {
          String bad = q.checkWait(m, ex);
          if (bad == null) {
            waitLater(m, q.waitSet(ex));
            q.stats.parks++;
            continue;
          }
          ex = Execution.error(bad);
        }
        q.complete(m, ex);
      }
      // Items may already be here for the messages that now wait (sent before they started).
      wakeLater();
      if (later.isEmpty() && !deferred.isEmpty() && deferredTried == completions) {
        // Every deferred message is still blocked and nothing is in progress that could let one
        // start: the application broke its promise; the first one ends with an error rather than
        // all of them waiting for ever.
        Msg m = deferred.remove(0);
        q.complete(m, Execution.error("the application blocked with no message in progress"));
      }
    }
  }

  /**
   * Resumes a message waiting with resumeLater if an item from each awaited group is here. If
   * the application answers resumeLater again, the message waits until another item arrives for
   * it or another message completes here (which may be what it waits for).
   */
  void resumeIfReady(MsgId id) {
    if (tryResume(id)) {
      wakeLater();
    }
  }

  /** Invokes a satisfied later message once; true if it completed. */
  private boolean tryResume(MsgId id) {
    Later l = later.get(id);
    if (l == null || !q.inboxes.satisfied(id, l.on)) {
      return false;
    }
    Execution ex = q.resume(new ExecutionCtx(q, l.m));
    if (ex.isAwait() || ex.isResumeLater()) {
      String bad = q.checkWait(l.m, ex);
      if (bad == null) {
        l.on = q.waitSet(ex);
        return false;
      }
      ex = Execution.error(bad);
    }
    later.remove(id);
    q.complete(l.m, ex);
    return true;
  }

  /**
   * After a completion, gives every later message whose items are all here another chance, in
   * id order, until a pass completes none (each completion may unblock others).
   */
  void wakeLater() {
    boolean progress = true;
    while (progress && !later.isEmpty()) {
      progress = false;
      for (MsgId id : new ArrayList<>(later.keySet())) {
        progress |= tryResume(id);
      }
    }
  }

  void describeTo(StringBuilder b) {
    if (!deferred.isEmpty()) {
      b.append("  deferred ").append(deferred.size()).append(", first ").append(deferred.get(0).start.id())
          .append('\n');
    }
    int n = 0;
    for (var e : later.entrySet()) {
      if (n++ == 3) {
        break;
      }
      b.append("  resumes later ").append(e.getKey()).append(" on ").append(e.getValue().on).append('\n');
    }
  }

  void writeLaterTo(Output out, Codec codec) {
    out.writeVarInt(later.size(), true);
    for (Later l : later.values()) {
      l.m.writeTo(out, codec);
      SnapshotIo.writeGroups(out, l.on);
    }
  }

  void readLaterFrom(Input in, Codec codec) {
    int n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      Msg m = Msg.readFrom(in, codec);
      waitLater(m, SnapshotIo.readGroups(in));
      q.queued.put(m.start.id(), m);
    }
  }

  void writeDeferredTo(Output out, Codec codec) {
    out.writeVarInt(deferred.size(), true);
    for (Msg m : deferred) {
      m.writeTo(out, codec);
    }
  }

  void readDeferredFrom(Input in, Codec codec) {
    int n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      Msg m = Msg.readFrom(in, codec);
      deferred.add(m);
      q.queued.put(m.start.id(), m);
    }
  }
}
