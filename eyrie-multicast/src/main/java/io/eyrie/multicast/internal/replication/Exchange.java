package io.eyrie.multicast.internal.replication;

import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.Wire.Component;
import io.eyrie.multicast.internal.Wire.Decision;
import io.eyrie.multicast.internal.Wire.Forward;
import io.eyrie.multicast.internal.state.GroupState;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The unlogged side of design 4.3.1 at one group replica: while the replica leads its group, it
 * pushes and pulls the components of the messages undecided in its applied state (rule 4),
 * collects the other destinations' components, appends a decision once it holds them all and
 * again until the decision is applied (rule 5), and forwards a message to destinations that
 * never answered for it (rule 9). Nothing here changes replicated state: it only chooses what the
 * leader appends. Deterministic given its inputs (time is passed in), so the simulation drives
 * this very class. What it knows of each message, and the rules that read only that, are a
 * {@link MessageTrack}; the components that come before their message, {@link EarlyComponents}.
 *
 * <p>Thread-safe: methods synchronize on this object, and take the group state's lock (through
 * {@link View}) only inside that; {@link #pending} takes no lock, so the apply thread, which holds
 * the state's lock, never waits for this one.
 */
public final class Exchange {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Exchange.class);
  /** The first pull after the push, and the starting interval of a message's pulls. */
  public static final long T_PULL_NANOS = 50_000_000L;
  /** The longest interval between pulls of one message. */
  public static final long MAX_PULL_NANOS = 1_000_000_000L;
  /** How long a message may stay undecided with a silent destination before it is forwarded. */
  public static final long T_FWD_NANOS = 1_000_000_000L;
  /** How long a component for a message not applied here yet is kept. */
  static final long EARLY_NANOS = 5_000_000_000L;
  static final int MAX_EARLY = 100_000;

  /** What the exchange reads from the replica's applied state (under the state's lock). */
  public interface View {
    /** The replica's own component of a message it retains, or null. */
    Component component(MsgId id);

    /** The multi-destination messages undecided in the applied state, with their destinations. */
    SortedMap<MsgId, GroupId[]> undecided();

    /** The destinations of a multi-destination message undecided in the applied state, or null. */
    GroupId[] undecided(MsgId id);

    /** Components of other destinations the log holds for a message (Conflict items). */
    Map<GroupId, Long> loggedComponents(MsgId id);

    /** The destinations a Forward already sent the message to. */
    Set<GroupId> forwardedTo(MsgId id);

    /**
     * Runs {@code body} holding whatever lock the reads need, once for all of its reads (a
     * state's lock is reentrant): one step of the exchange sees one applied state and does not
     * contend with the apply thread for every message it reads.
     */
    default <T> T locked(java.util.function.Supplier<T> body) {
      return body.get();
    }
  }

  /** A view of a group state; the caller holds whatever lock the state needs. */
  public static View viewOf(GroupState s) {
    return StateView.of(s);
  }

  /** Where the exchange's outputs go. */
  public interface Net {
    /**
     * Sends components to group {@code to} (its leader first, any replica after a timeout); its
     * answer, the receiver's own components of the same messages, comes back through {@link
     * #received}.
     */
    void send(GroupId to, List<Component> list);

    /** Appends a decision to this group's log (it rides the node's next start batch). */
    void decide(Decision d);

    /** Appends a forward to this group's log. */
    void forward(Forward f);
  }

  /** What one step decided to send, emitted after the state's lock is released. */
  private static final class Out {
    final TreeMap<GroupId, List<Component>> components = new TreeMap<>();
    final List<Decision> decides = new ArrayList<>();
    final List<Forward> forwards = new ArrayList<>();

    void add(GroupId to, Component c) {
      components.computeIfAbsent(to, k -> new ArrayList<>()).add(c);
    }
  }

  private final GroupId self;
  private final Net net;
  private boolean leader;
  private final TreeMap<MsgId, MessageTrack> tracks = new TreeMap<>();
  private final EarlyComponents early = new EarlyComponents(EARLY_NANOS, MAX_EARLY);
  private final ConcurrentLinkedQueue<MsgId> fresh = new ConcurrentLinkedQueue<>();
  private long decides;
  private long forwards;
  private long sends;

  public Exchange(GroupId self, Net net) {
    this.self = self;
    this.net = net;
  }

  /**
   * Called by the apply thread (holding the state's lock) when the applied state made a
   * multi-destination message pending: {@link #flush} then pushes its component at once.
   */
  public void pending(MsgId id) {
    fresh.add(id);
  }

  /** The replica's leadership changed: a new leader starts with nothing collected (B1a). */
  public synchronized void leadership(boolean isLeader, long now) {
    if (isLeader == leader) {
      return;
    }
    leader = isLeader;
    tracks.clear();
    early.clear();
  }

  /** Whether the replica leads its group, as the exchange was last told. */
  public synchronized boolean isLeader() {
    return leader;
  }

  /** Pushes the components of the messages made pending since the last call (rule 4, first push). */
  public synchronized void flush(View view, long now) {
    if (!leader) {
      fresh.clear();
      return;
    }
    if (fresh.isEmpty()) {
      return;
    }
    emit(view.locked(() -> flushLocked(view, now)));
  }

  private Out flushLocked(View view, long now) {
    Out out = new Out();
    for (MsgId id = fresh.poll(); id != null; id = fresh.poll()) {
      MessageTrack t = track(view, id, now);
      if (t == null || t.pushed) {
        continue;
      }
      t.pushed = true;
      Component own = view.component(id);
      if (own == null) {
        continue;
      }
      // To every other destination, also one whose component came early: it needs this one.
      for (GroupId d : t.dests) {
        if (!d.equals(self)) {
          out.add(d, own);
        }
      }
      tryDecide(view, id, t, now, out);
    }
    return out;
  }

  /**
   * Takes components another destination sent (a push, or the answer to this replica's pull).
   * Kept only while this replica leads; a component of a message not applied here yet waits a
   * few seconds (rule 3).
   */
  public synchronized void received(View view, List<Component> list, long now) {
    if (!leader || list == null || list.isEmpty()) {
      return;
    }
    emit(view.locked(() -> receivedLocked(view, list, now)));
  }

  private Out receivedLocked(View view, List<Component> list, long now) {
    Out out = new Out();
    for (Component c : list) {
      if (c == null || c.id() == null || c.group() == null || c.group().equals(self)) {
        continue;
      }
      MessageTrack t = tracks.get(c.id());
      if (t == null) {
        t = track(view, c.id(), now);
      }
      if (t == null && view.component(c.id()) != null) {
        continue; // retained here and no longer undecided: decided, a late answer needs no keeping
      }
      if (t == null) {
        early.add(c, now);
        continue;
      }
      t.hold(c);
      tryDecide(view, c.id(), t, now, out);
    }
    return out;
  }

  /**
   * The periodic step (rules 4, 5 and 9): tracks every message undecided in the applied state,
   * drops the decided ones, appends again the decisions not applied after {@code T_pull}, pulls
   * the missing components with a per-message back-off, and forwards messages a destination has
   * been silent on for {@code T_fwd}.
   */
  public synchronized void tick(View view, long now) {
    if (!leader) {
      return;
    }
    emit(view.locked(() -> tickLocked(view, now)));
    early.expire(now);
  }

  private Out tickLocked(View view, long now) {
    Out out = new Out();
    SortedMap<MsgId, GroupId[]> undecided = view.undecided();
    tracks.keySet().retainAll(undecided.keySet());
    for (Map.Entry<MsgId, GroupId[]> u : undecided.entrySet()) {
      MsgId id = u.getKey();
      MessageTrack t = track(id, u.getValue(), now);
      // A decision is tried when a component arrives and when the own one is applied; here only
      // again when due (re-appended after T_pull, K1), or for a message first tracked here, or
      // every T_pull for components taken from the log: not every tick, which under load cost
      // the exchange most of its time (each try reads the state under its lock).
      if (t.lastDecide != Long.MIN_VALUE) {
        tryDecide(view, id, t, now, out);
        continue;
      }
      if (now >= t.nextTry) {
        if (tryDecide(view, id, t, now, out)) {
          continue;
        }
        t.nextTry = now + T_PULL_NANOS;
      }
      if (now >= t.nextPull || !t.pushed) {
        t.pushed = true;
        Component own = view.component(id);
        if (own != null) {
          for (GroupId d : t.dests) {
            if (!d.equals(self) && !t.held.containsKey(d)) {
              out.add(d, own);
            }
          }
        }
        t.backOff(now);
      }
      if (now - t.since >= T_FWD_NANOS && (t.lastForward == Long.MIN_VALUE || now - t.lastForward >= T_FWD_NANOS)) {
        List<GroupId> silent = t.silent(self, view.forwardedTo(id), view.loggedComponents(id));
        if (!silent.isEmpty()) {
          t.lastForward = now;
          forwards++;
          out.forwards.add(new Forward(id, silent.toArray(new GroupId[0])));
        }
      }
    }
    return out;
  }

  /** Starts tracking a message undecided in the applied state, with the components that came early. */
  private MessageTrack track(View view, MsgId id, long now) {
    MessageTrack t = tracks.get(id);
    if (t != null) {
      return t;
    }
    GroupId[] dests = view.undecided(id);
    return dests == null ? null : track(id, dests, now);
  }

  private MessageTrack track(MsgId id, GroupId[] dests, long now) {
    MessageTrack t = tracks.get(id);
    if (t != null) {
      return t;
    }
    t = new MessageTrack(dests, now);
    tracks.put(id, t);
    for (Component c : early.take(id)) {
      t.hold(c);
    }
    return t;
  }

  /**
   * Appends the decision of a message if this replica can make it (rule 5) and did not append it
   * within the last {@code T_pull}: it needs its own applied component and a component of every
   * other destination, or another destination's decision, which holds them all.
   */
  private boolean tryDecide(View view, MsgId id, MessageTrack t, long now, Out out) {
    // Long.MIN_VALUE: never appended (now - MIN_VALUE would overflow and look recent).
    if (t.lastDecide != Long.MIN_VALUE && now - t.lastDecide < T_PULL_NANOS) {
      return true; // appended within T_pull: what was held then is held still
    }
    Component own = view.component(id);
    if (own == null || own.decision() != null) {
      return false;
    }
    Decision d = t.decision(self, id, own, view);
    if (d == null) {
      return false;
    }
    t.lastDecide = now;
    decides++;
    LOG.debug("{}: deciding {} {}", self, id, java.util.Arrays.toString(d.ts()));
    out.decides.add(d);
    return true;
  }

  /** Appends the step's decisions and forwards, then sends its components (outside the state's lock). */
  private void emit(Out out) {
    out.decides.forEach(net::decide);
    out.forwards.forEach(net::forward);
    for (Map.Entry<GroupId, List<Component>> e : out.components.entrySet()) {
      sends++;
      net.send(e.getKey(), e.getValue());
    }
  }

  /**
   * The answer of a replica to components it received: its own components of the same messages,
   * those it retains (rule 4: "and says nothing of the others"). Any replica answers.
   */
  public static List<Component> answer(View view, List<Component> asked) {
    List<Component> out = new ArrayList<>();
    if (asked == null) {
      return out;
    }
    for (Component c : asked) {
      if (c != null && c.id() != null) {
        Component own = view.component(c.id());
        if (own != null) {
          out.add(own);
        }
      }
    }
    return out;
  }

  /** Components of messages not applied here yet, kept for a few seconds (rule 3). */
  synchronized int earlyCount() {
    return early.size();
  }

  /** Counters: decisions appended, forwards appended, component batches sent. */
  public synchronized long[] counters() {
    return new long[] {decides, forwards, sends};
  }
}
