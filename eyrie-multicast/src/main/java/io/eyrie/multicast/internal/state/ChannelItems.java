package io.eyrie.multicast.internal.state;

import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.internal.Wire;
import io.eyrie.multicast.internal.Wire.Conflict;
import io.eyrie.multicast.internal.Wire.Data;
import io.eyrie.multicast.internal.Wire.Propose;
import io.eyrie.multicast.internal.Wire.Start;
import io.eyrie.multicast.internal.state.ClientTable.ClientRecord;
import java.util.Arrays;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The items a group takes from its incoming channels, each dispatched to the part it concerns:
 * forwarded messages ({@code Propose}) to the {@link Ordering} (through {@link Admission}'s
 * checks), decisions of other destinations to {@link Decisions}, Data items to the {@link
 * ExecutionQueue}, and the handling of a message id reused with other content (Propose for
 * another version, Conflict, Abandoned). No state of its own: it reads
 * and changes {@link GroupState}'s parts.
 */
final class ChannelItems {
  private static final Logger LOG = LoggerFactory.getLogger(ChannelItems.class);

  private final GroupState g;
  private final Admission admission;

  ChannelItems(GroupState g, Admission admission) {
    this.g = g;
    this.admission = admission;
  }

  /** Applies one item from {@code from}'s channel, in channel order. */
  void apply(GroupId from, Object item) {
    if (item instanceof Propose p) {
      applyPropose(from, p);
    } else if (item instanceof Data d) {
      g.exec.receive(from, d.id(), d.value(), g.order.isPending(d.id()));
    } else if (item instanceof Wire.Decided d) {
      g.decisions.apply(from, d.decision());
    } else if (item instanceof Conflict c) {
      applyConflict(from, c);
    } else if (item instanceof Wire.Abandoned a) {
      applyAbandoned(from, a);
    } else {
      LOG.error("{}: dropping unknown channel item {} from {}", g.self, item == null ? null : item.getClass(), from);
    }
  }

  /*
   * A message id reused with other content (review F7: a reused client id, or colliding
   * incarnation ids) must not make groups deliver different messages under one id, nor block any
   * group. Each destination holds the version it made pending; components carry the version's
   * digest, and a leader that holds a component of another digest from a destination decides the
   * message conflicting (design 4.3.1, rule 12): it still takes part in the ordering, so no group
   * waits for ever, but it is never executed; at its head it ends with an error reply (at the
   * reply group) and Abandoned items. A Propose (only ever sent by a Forward) of another version
   * marks the message conflicting here; if the proposer is not among this group's destinations,
   * or the message is no longer retained here, the proposer would wait for ever for this group's
   * component, so it is answered with a Conflict carrying this group's timestamp, once per
   * (message, proposer), which the proposer counts as this group's component with the conflict
   * flag. The order of a conflicting message may differ between groups (their versions have
   * different destination sets), which is harmless since it runs nowhere it was marked.
   */

  /*
   * A Propose is never refused, not even for an expired client: the forwarding group has the
   * message pending and cannot decide it without this group's component, so refusing it would
   * block the proposer (and every later message there) forever. Accepting it is safe because a
   * group makes a message pending at most once, and no Propose of a version can arrive after this
   * group dropped it from retention: every other destination's Propose precedes its Decided on
   * the channel, and retention waits for every Decided (rule 8).
   */
  private void applyPropose(GroupId from, Propose p) {
    Start s = p.start();
    String invalid = admission.validate(s);
    if (invalid != null || Arrays.binarySearch(s.dests(), from) < 0) {
      LOG.error("{}: dropping invalid proposal from {}: {}", g.self, from, invalid);
      return;
    }
    long digest = s.digest();
    Retention.Entry e = g.retention.get(s.id());
    Msg m = g.order.get(s.id());
    if (e != null || m != null) {
      long own = e != null ? e.digest : m.start.digest();
      if (own == digest) {
        return; // known here already (a Start or an earlier Propose created it)
      }
      LOG.error("{}: proposal from {} for {} with other content than the message here; it will not be executed",
          g.self, from, s.id());
      conflictWith(from, s.id(), e, m, e != null ? e.lts : Ordering.ownTs(m));
      return;
    }
    ClientRecord rec = admission.client(s);
    if (rec.delivered.contains(s.id())) {
      // Delivered here and no longer retained: another version (rule 8's FIFO argument).
      LOG.error("{}: proposal from {} for {} which was delivered here; the id was reused with other content",
          g.self, from, s.id());
      conflictWith(from, s.id(), null, null, g.order.clock);
      return;
    }
    admission.newPending(s);
    g.deliverReady();
  }

  /** Marks this group's version conflicting and answers the proposer of another version (once). */
  private void conflictWith(GroupId from, io.eyrie.multicast.MsgId id, Retention.Entry e, Msg m, long ts) {
    if (m != null) {
      m.conflict = true;
    } else {
      Msg q = g.exec.queued(id);
      if (q != null && !g.exec.isStarted(q)) {
        q.conflict = true;
      }
    }
    if (e == null || e.otherVersions.add(from)) {
      g.outboxes.send(from, new Conflict(id, ts));
    }
    if (e != null && e.decision != null) {
      g.outboxes.sendLazy(from, new Wire.Decided(e.decision));
    }
    g.deliverReady();
  }

  /**
   * Another group holds another version of a message (see above): this group's version is not
   * executed, and the sender's timestamp, if it is among the version's destinations, is logged as
   * its component (a leader reads it from {@link Retention.Entry#logged}).
   */
  private void applyConflict(GroupId from, Conflict c) {
    if (c.id() == null) {
      return;
    }
    Msg m = g.order.get(c.id());
    Retention.Entry e = g.retention.get(c.id());
    if (e != null) {
      // The sender holds (or held) another version and will never send this version's Decided
      // nor its Propose: its Conflict stands for its acknowledgement, so retention can end
      // (rule 8; the simulation's finding 4).
      e.otherVersions.add(from);
      e.acked.add(from);
      if (m != null && m.finalTs < 0 && Arrays.binarySearch(m.start.dests(), from) >= 0) {
        e.logged.putIfAbsent(from, c.ts());
      }
    }
    if (m == null) {
      if (e == null) {
        // A Conflict may answer this group's Decided after this group dropped the message
        // (another version there): nothing left to do.
        LOG.debug("{}: a conflict from {} for {}, which is no longer here", g.self, from, c.id());
      }
      g.retention.dropIfDone(e);
      return;
    }
    LOG.error("{}: {} holds another message with the id {}; it will not be executed", g.self, from, c.id());
    m.conflict = true;
    g.retention.dropIfDone(e);
  }


  /**
   * Another destination ended a message without executing it (review N4; see {@link
   * Wire.Abandoned}). This group learns that another version exists: a version not started here
   * is not executed either; a started one gets the sender's item without value, which ends a
   * wait for the sender (the application sees it in abandonedBy).
   */
  private void applyAbandoned(GroupId from, Wire.Abandoned a) {
    if (a.id() == null) {
      return;
    }
    Msg m = g.order.get(a.id());
    if (m != null) {
      LOG.error("{}: {} ended {} without executing it (its id was reused); it will not be executed", g.self, from,
          a.id());
      m.conflict = true;
      return;
    }
    Msg q = g.exec.queued(a.id());
    if (q == null) {
      return; // finished here already
    }
    if (!g.exec.isStarted(q)) {
      LOG.error("{}: {} ended {} without executing it (its id was reused); it will not be executed", g.self, from,
          a.id());
      q.conflict = true;
    } else if (Arrays.binarySearch(q.start.dests(), from) >= 0) {
      LOG.error("{}: {} ended {} without executing it (its id was reused); it started here and is told so", g.self,
          from, a.id());
      g.exec.abandonedBy(from, a.id());
    }
  }
}
