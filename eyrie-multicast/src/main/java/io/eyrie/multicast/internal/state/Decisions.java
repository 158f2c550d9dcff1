package io.eyrie.multicast.internal.state;

import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.Wire.Component;
import io.eyrie.multicast.internal.Wire.Conflict;
import io.eyrie.multicast.internal.Wire.Decided;
import io.eyrie.multicast.internal.Wire.Decision;
import io.eyrie.multicast.internal.Wire.Forward;
import io.eyrie.multicast.internal.Wire.Propose;
import java.util.Arrays;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rules of design 4.3.1 that the log applies: decisions (a leader's {@code Decide}, or
 * another destination's {@code Decided}), forwards, and what a replica reads from its applied
 * state for the unlogged exchange (components, started evidence). No state of its own: it reads
 * and changes {@link GroupState}'s parts, the {@link Retention} table above all.
 */
final class Decisions {
  private static final Logger LOG = LoggerFactory.getLogger(Decisions.class);

  /**
   * Test-only switch for the simulation's positive control of K7 (never set outside tests): when
   * true, {@link #started} counts a deferred (blocked) message as started, as {@link
   * ExecutionQueue#isStarted} does, which rule 11 forbids.
   */
  static boolean blockedCountsAsStartedForTest;

  /**
   * Test-only switch for the positive control "Forward not limited per (m, g)" (never set outside
   * tests): when true, every applied Forward sends its Propose again (K5 forbids it).
   */
  static boolean forwardEveryTimeForTest;

  private final GroupState g;

  Decisions(GroupState g) {
    this.g = g;
  }

  /**
   * Applies a decision (rule 6): {@code from} is the destination whose {@code Decided} carried it,
   * or null for this group's own {@code Decide}. The acknowledgement is recorded whatever the
   * message's state (K3); the decision itself decides the message only if it is pending and
   * undecided here, and only if it agrees with this group's log.
   */
  void apply(GroupId from, Decision d) {
    if (d == null || d.id() == null || d.groups() == null || d.ts() == null || d.groups().length != d.ts().length) {
      LOG.error("{}: dropping a malformed decision from {}", g.self, from == null ? "this group's leader" : from);
      return;
    }
    Retention.Entry e = g.retention.get(d.id());
    if (from != null && e == null && !sameVersionHere(d)) {
      // No entry: this group holds another version of the message (single-destination, or dropped
      // from retention), or never knew this one (a destination's Decided reaches it only after it gave its own
      // component, which needs an entry, and before it drops that entry). The sender would wait
      // for ever for this group's acknowledgement: answer with a Conflict, which stands for it
      // (finding 4 of the simulation). Once per (message, sender): a sender decides once.
      markConflict(d.id());
      g.outboxes.send(from, new Conflict(d.id(), g.order.clock));
      return;
    }
    if (from != null && e != null) {
      e.acked.add(from);
      if (d.digest() != e.digest) {
        // K10: another version of the message was decided there.
        boolean fresh = e.otherVersions.add(from);
        markConflict(d.id());
        // K9: decided here already, this group's Decided went to its own destinations only;
        // the sender of the other version waits for it too: answer at once.
        if (fresh && e.decision != null && Arrays.binarySearch(e.dests, from) < 0 && g.outboxes.has(from)) {
          g.outboxes.sendLazy(from, new Decided(e.decision));
        }
      }
    }
    Msg m = g.order.get(d.id());
    if (m != null && m.finalTs < 0) {
      GroupId[] dests = m.start.dests();
      if (!Arrays.equals(dests, d.groups()) || d.tsOf(g.self) != m.localTs) {
        LOG.error("{}: ignoring a decision of {} from {} that disagrees with this group's log (destinations {}, "
            + "local timestamp {}; the decision has {} and {})", g.self, d.id(), from == null ? "this group's leader"
            : from, Arrays.toString(dests), m.localTs, Arrays.toString(d.groups()), d.tsOf(g.self));
      } else {
        if (d.conflict() || d.digest() != (e == null ? m.start.digest() : e.digest)) {
          m.conflict = true;
        }
        g.order.decide(m, d);
        boolean conflict = m.conflict;
        Decision own = new Decision(d.id(), d.groups(), d.ts(), e == null ? m.start.digest() : e.digest, conflict);
        if (e != null) {
          e.decision = own;
          // Rule 7: every other destination, and every sender of another version, learns it; lazily.
          for (GroupId to : dests) {
            if (!to.equals(g.self)) {
              g.outboxes.sendLazy(to, new Decided(own));
            }
          }
          for (GroupId to : e.otherVersions) {
            if (Arrays.binarySearch(dests, to) < 0 && g.outboxes.has(to)) {
              g.outboxes.sendLazy(to, new Decided(own));
            }
          }
        }
        g.deliverReady();
      }
    }
    g.retention.dropIfDone(e);
  }

  /** True if this group holds the decision's version of its message (pending or queued here). */
  private boolean sameVersionHere(Decision d) {
    Msg m = g.order.get(d.id());
    if (m == null) {
      m = g.exec.queued(d.id());
    }
    return m != null && m.start.digest() == d.digest();
  }

  /** Marks a message with a reused id conflicting wherever it is here (not started: not executed). */
  private void markConflict(MsgId id) {
    Msg m = g.order.get(id);
    if (m != null) {
      m.conflict = true;
      return;
    }
    Msg q = g.exec.queued(id);
    if (q != null && !g.exec.isStarted(q)) {
      q.conflict = true;
    }
  }

  /**
   * Applies a forward (rule 9): while the message is undecided here, it sends the message to each
   * named destination not sent to before, at most once per destination ever.
   */
  void apply(Forward f) {
    if (f == null || f.id() == null || f.to() == null) {
      return;
    }
    Msg m = g.order.get(f.id());
    Retention.Entry e = g.retention.get(f.id());
    if (m == null || m.finalTs >= 0 || e == null) {
      return;
    }
    for (GroupId to : f.to()) {
      if (to != null && !to.equals(g.self) && Arrays.binarySearch(m.start.dests(), to) >= 0
          && g.outboxes.has(to) && (e.forwardedTo.add(to) || forwardEveryTimeForTest)) {
        g.outboxes.send(to, new Propose(m.start));
      }
    }
  }

  /** Called when a message is delivered here: its retention may end. */
  void delivered(MsgId id) {
    Retention.Entry e = g.retention.get(id);
    if (e != null) {
      e.delivered = true;
      g.retention.dropIfDone(e);
    }
  }

  // ---------------------------------------------------------------- reading, for the unlogged exchange

  /** This group's component of a retained message, or null if it holds none (rule 3). */
  Component component(MsgId id) {
    Retention.Entry e = g.retention.get(id);
    return e == null ? null : new Component(id, g.self, e.lts, e.digest, e.decision);
  }

  /**
   * Whether this replica's applied state shows positive evidence that the message started here
   * (rule 11): it is the head and started, or waits off the queue, or it finished here (delivered
   * and no longer queued), or the retention table records it delivered.
   */
  boolean started(MsgId id) {
    Msg q = g.exec.queued(id);
    if (q != null) {
      // K7: a deferred (blocked) message reached the head but has not started.
      return blockedCountsAsStartedForTest ? g.exec.isStarted(q) : g.exec.hasStarted(q);
    }
    Retention.Entry e = g.retention.get(id);
    if (e != null) {
      return e.delivered;
    }
    ClientTable.ClientRecord rec = g.clients.get(id.client());
    return rec != null && rec.delivered.contains(id);
  }
}
