package io.eyrie.multicast.internal.state;

import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.internal.Wire;
import io.eyrie.multicast.internal.Wire.Conflict;
import io.eyrie.multicast.internal.Wire.Data;
import io.eyrie.multicast.internal.Wire.Propose;
import io.eyrie.multicast.internal.Wire.Start;
import io.eyrie.multicast.internal.Wire.Started;
import io.eyrie.multicast.internal.state.ClientTable.ClientRecord;
import java.util.Arrays;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The items a group takes from its incoming channels, each dispatched to the part it concerns:
 * proposals to the {@link Ordering} (through {@link Admission}'s checks), Data items and
 * started-signals to the {@link ExecutionQueue}, and the handling of a message id reused with
 * other content (Propose for another version, Conflict, Abandoned). No state of its own: it reads
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
      g.exec.receive(from, d.id(), d.value(), true, g.order.isPending(d.id()));
    } else if (item instanceof Started s) {
      g.exec.receive(from, s.id(), null, false, g.order.isPending(s.id()));
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
   * group. A group that sees a proposal whose content differs from its own pending version marks
   * the message conflicting: it still takes part in the ordering (so no group waits for ever)
   * but never executes it; at its head the message ends with an error reply (at the reply group)
   * and only the started-signal is sent. Each destination proposes its own version, so a group
   * whose version shares a destination with another version receives that other version (or a
   * Conflict) and marks it too. If the proposer is among this group's destinations, its timestamp
   * counts as usual; otherwise the proposer waits for a proposal this group would never send, so
   * it is answered with a Conflict carrying this group's timestamp, which the proposer counts as
   * this group's proposal and which marks the message there. A proposal for a message delivered
   * here also comes from a group outside this group's version's destinations (channels are
   * exactly-once and a group proposes once, so the proposals of this version's destinations were
   * all counted before delivery): it is answered with a Conflict as well. The order of a
   * conflicting message may differ between groups (their versions have different destination
   * sets), which is harmless since it runs nowhere it was marked. A group where no other version
   * ever shows up executes its version; the guarantee is that no group blocks and no group that
   * learned of another version executes either.
   */

  /*
   * A proposal is never refused, not even for an expired client: the proposer has the message
   * pending and cannot decide it without this group's proposal, so refusing it would block the
   * proposer (and every later message there) forever. Accepting it is safe because a group makes
   * a message pending at most once (a Start of a message it may have executed is refused STALE or
   * EXPIRED), so each destination proposes a message once, and this group delivers it only after
   * every other destination's proposal arrived: a proposal always concerns a message that was
   * never delivered here.
   */
  private void applyPropose(GroupId from, Propose p) {
    Start s = p.start();
    String invalid = admission.validate(s);
    if (invalid != null || Arrays.binarySearch(s.dests(), from) < 0) {
      LOG.error("{}: dropping invalid proposal from {}: {}", g.self, from, invalid);
      return;
    }
    ClientRecord rec = admission.client(s);
    if (rec.delivered.contains(s.id())) {
      Msg q = g.exec.queued(s.id());
      if (q != null && q.start.sameContent(s)) {
        LOG.error("{}: duplicate proposal from {} for {} which was delivered already", g.self, from, s.id());
        return;
      }
      // Another version of a message delivered here (see above): let the proposer decide, and
      // do not execute ours if it has not started yet.
      LOG.error("{}: proposal from {} for {} which was delivered here; the id was reused with other content",
          g.self, from, s.id());
      if (q != null && !g.exec.isStarted(q)) {
        q.conflict = true;
      }
      g.outboxes.send(from, new Conflict(s.id(), g.order.clock));
      return;
    }
    Msg m = g.order.get(s.id());
    if (m == null) {
      m = admission.newPending(s);
    } else if (!m.start.sameContent(s)) {
      LOG.error("{}: proposal from {} for {} with other content than the message pending here; it will not be "
          + "executed", g.self, from, s.id());
      m.conflict = true;
      if (Arrays.binarySearch(m.start.dests(), from) < 0) {
        g.outboxes.send(from, new Conflict(s.id(), Ordering.ownTs(m)));
        g.deliverReady();
        return;
      }
    }
    g.order.addProposal(m, from, p.ts());
    g.deliverReady();
  }

  private void applyConflict(GroupId from, Conflict c) {
    Msg m = c.id() == null ? null : g.order.get(c.id());
    if (m == null) {
      LOG.error("{}: dropping a conflict from {} for {}, which is not pending here", g.self, from, c.id());
      return;
    }
    LOG.error("{}: {} holds another message with the id {}; it will not be executed", g.self, from, c.id());
    m.conflict = true;
    if (Arrays.binarySearch(m.start.dests(), from) >= 0) {
      g.order.addProposal(m, from, c.ts());
    }
    g.deliverReady();
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
