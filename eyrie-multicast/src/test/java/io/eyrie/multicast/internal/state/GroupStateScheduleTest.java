package io.eyrie.multicast.internal.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.Wire.ChannelBatch;
import io.eyrie.multicast.internal.Wire.Component;
import io.eyrie.multicast.internal.Wire.Decided;
import io.eyrie.multicast.internal.Wire.Decision;
import io.eyrie.multicast.internal.Wire.Forward;
import io.eyrie.multicast.internal.Wire.Start;
import io.eyrie.multicast.internal.Wire.StartBatch;
import io.eyrie.multicast.internal.replication.Exchange;
import io.eyrie.multicast.internal.state.SimWorkload.MsgInfo;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The schedules of design 4.3.2, each a deterministic run of the simulation ({@link SimGroups},
 * {@link SimWorkload}) that drives the real {@link GroupState} and {@link Exchange}: the schedule
 * is forced step by step, then the faults heal, everything drains and every check of {@link
 * SimChecks} runs (agreement, prefix and acyclic order, the same V everywhere, real time of the
 * released replies, equal bytes at equal prefixes, retention empty, outboxes drained).
 */
@Timeout(60)
class GroupStateScheduleTest {
  static final GroupId G0 = GroupId.valueOf("g0");
  static final GroupId G1 = GroupId.valueOf("g1");
  static final GroupId G2 = GroupId.valueOf("g2");
  static final long PLAIN = SimDeliverer.PLAIN;
  static final long T_PULL = Exchange.T_PULL_NANOS;

  /** A simulation without random faults: the schedule makes its own. */
  static SimWorkload quiet(int groups) {
    SimWorkload w = new SimWorkload(7, groups, 0);
    SimGroups.Knobs k = w.sim.knobs;
    k.netLossPct = 0;
    k.netDupPct = 0;
    k.netMaxDelay = SimGroups.MS;
    k.followerPct = 0;
    k.batchLossPct = 0;
    k.batchDupPct = 0;
    k.channelFaults = false;
    k.deposedAppendPct = 100;
    return w;
  }

  /** A message of client 1 (which raises its watermark) waited for at node 0. */
  static MsgInfo send(SimWorkload w, GroupId reply, GroupId... dests) {
    return w.newMessage(1, dests, reply, PLAIN, false, 0);
  }

  /** Whether group g's log holds a start batch with a decision of id (its own leader decided it). */
  static int ownDecides(SimWorkload w, int g, MsgId id) {
    int k = 0;
    for (Object e : w.sim.grp[g].log) {
      if (e instanceof StartBatch b) {
        for (Decision d : b.decides()) {
          k += d.id().equals(id) ? 1 : 0;
        }
      }
    }
    return k;
  }

  /** Whether group g's log holds a channel Decided of id. */
  static int channelDecides(SimWorkload w, int g, MsgId id) {
    int k = 0;
    for (Object e : w.sim.grp[g].log) {
      if (e instanceof ChannelBatch b) {
        for (Object o : b.items()) {
          k += o instanceof Decided d && d.decision().id().equals(id) ? 1 : 0;
        }
      }
    }
    return k;
  }

  static int forwards(SimWorkload w, int g, MsgId id) {
    int k = 0;
    for (Object e : w.sim.grp[g].log) {
      if (e instanceof StartBatch b) {
        for (Forward f : b.forwards()) {
          k += f.id().equals(id) ? 1 : 0;
        }
      }
    }
    return k;
  }

  static boolean decided(SimWorkload w, int g, MsgId id) {
    return w.sim.grp[g].decisions.containsKey(id);
  }

  /** Rounds until the message is decided at group g (at most {@code max}); returns the rounds taken. */
  static int untilDecided(SimWorkload w, int g, MsgId id, int max) {
    for (int i = 0; i < max; i++) {
      if (decided(w, g, id)) {
        return i;
      }
      w.round();
    }
    assertTrue(decided(w, g, id), () -> w.sim.gid(g) + " never decided " + id + w.sim.describe());
    return max;
  }

  /**
   * B1a receiver leader change: g0's component reaches g1's leader, which loses leadership before
   * its Decide commits. The new leader has no collection; it pulls (rule 4) and g0 answers from
   * its retention table. No Decided helps: the channels are held back until g1 decided.
   */
  @Test
  void b1aReceiverLeaderChange() {
    SimWorkload w = quiet(2);
    w.sim.channelBlocked = (g, h) -> true;
    MsgInfo m = send(w, G0, G0, G1);
    w.sim.loseBatch = g -> g == 1 && !w.sim.grp[1].decides.isEmpty();
    w.rounds(3);
    assertTrue(decided(w, 0, m.start.id()), "g0 decided from g1's component");
    assertFalse(decided(w, 1, m.start.id()), "g1's Decide was lost");
    assertTrue(w.sim.batchesLost > 0);
    w.sim.changeLeader(1);
    w.sim.silenceDeposed(1);
    w.sim.loseBatch = g -> false;
    untilDecided(w, 1, m.start.id(), 20);
    assertEquals(1, ownDecides(w, 1, m.start.id()), "the new leader decided through its own pull");
    w.sim.channelBlocked = (g, h) -> false;
    w.finish();
  }

  /** B1b loss: a component is dropped with no leader change; the next pull (T_pull) repairs it. */
  @Test
  void b1bLostComponentRepairedByNextPull() {
    SimWorkload w = quiet(2);
    w.sim.channelBlocked = (g, h) -> true;
    w.sim.knobs.netLossPct = 100;
    MsgInfo m = send(w, G0, G0, G1);
    w.rounds(1);
    assertTrue(w.sim.componentsSent > 0 && w.sim.network.isEmpty(), "the first pushes were lost");
    w.sim.knobs.netLossPct = 0;
    long lost = w.sim.now;
    untilDecided(w, 0, m.start.id(), 30);
    untilDecided(w, 1, m.start.id(), 30);
    assertTrue(w.sim.now - lost <= 4 * T_PULL, () -> "repaired after " + (w.sim.now - lost) / 1e6 + " ms");
    assertEquals(1, ownDecides(w, 0, m.start.id()));
    assertEquals(1, ownDecides(w, 1, m.start.id()));
    w.sim.channelBlocked = (g, h) -> false;
    w.finish();
  }

  /**
   * B1c lagging new leader: g1's new leader has not applied Start(m) yet; it pulls only what its
   * applied state holds; when it applies Start(m) later it pushes and pulls (level-triggered).
   */
  @Test
  void b1cLaggingNewLeader() {
    SimWorkload w = quiet(2);
    w.sim.channelBlocked = (g, h) -> true;
    SimGroups.Replica lagging = w.sim.rep(1, 2);
    lagging.frozen = true;
    w.sim.loseBatch = g -> g == 1 && !w.sim.grp[1].decides.isEmpty();
    MsgInfo m = send(w, G0, G0, G1);
    w.rounds(3);
    assertFalse(decided(w, 1, m.start.id()));
    assertNull(lagging.state.component(m.start.id()), "the follower has not applied Start(m)");
    w.sim.loseBatch = g -> false;
    w.sim.changeLeader(1, 2);
    w.sim.silenceDeposed(1);
    long sent = w.sim.componentsSent;
    w.sim.tick(1);
    assertEquals(sent, w.sim.componentsSent, "the lagging leader has nothing of m to push or pull");
    lagging.frozen = false;
    untilDecided(w, 1, m.start.id(), 20);
    assertEquals(1, ownDecides(w, 1, m.start.id()), "it pushed and pulled once it applied Start(m)");
    w.sim.channelBlocked = (g, h) -> false;
    w.finish();
  }

  /**
   * B2 forgotten component: g0 delivered m, its client's watermark passed m, and g0's log was
   * purged by a snapshot (every replica restored from one); g1's new leader pulls, and g0
   * answers V from its retention table (rule 8).
   */
  @Test
  void b2ForgottenComponentAnsweredFromRetention() {
    SimWorkload w = quiet(2);
    w.sim.channelBlocked = (g, h) -> true;
    w.sim.loseBatch = g -> g == 1 && !w.sim.grp[1].decides.isEmpty();
    MsgInfo m = send(w, G0, G0, G1);
    w.rounds(3);
    assertTrue(w.sim.rep(0, 0).app.hasExecuted(m.start.id()));
    w.abandon(m); // the client gives up on m (its reply is held at the gate)
    MsgInfo next = send(w, G0, G0); // carries the client's watermark past m
    w.rounds(2);
    assertTrue(next.start.watermark() > m.start.id().seq());
    for (int k = 0; k < SimGroups.REPLICAS; k++) {
      w.sim.restore(0, k, 0);
    }
    Component c = w.sim.lead(0).component(m.start.id());
    assertNotNull(c, "retained in the snapshot");
    assertNotNull(c.decision(), "with its V");
    w.sim.loseBatch = g -> false;
    w.sim.changeLeader(1);
    w.sim.silenceDeposed(1);
    untilDecided(w, 1, m.start.id(), 20);
    w.sim.channelBlocked = (g, h) -> false;
    w.finish();
  }

  /**
   * B3i duplicate creation: a delayed component of g0 reaches g1 after g1 delivered and forgot m;
   * components never create (rule 10), and nothing is appended for it.
   */
  @Test
  void b3iLateComponentNeverCreates() {
    SimWorkload w = quiet(2);
    MsgInfo m = send(w, G0, G0, G1);
    w.rounds(1);
    Component old = w.sim.lead(0).component(m.start.id());
    assertNotNull(old);
    w.finish();
    assertEquals(0, w.sim.lead(1).retainedCount());
    int log = w.sim.grp[1].log.size();
    SimGroups.Ex ex = w.sim.grp[1].ex;
    ex.ex.received(ex.view(), List.of(old), w.sim.now);
    assertTrue(Exchange.answer(ex.view(), List.of(old)).isEmpty(), "g1 says nothing of a message it forgot");
    w.rounds(5);
    assertEquals(log, w.sim.grp[1].log.size(), "a late component appends nothing");
    assertEquals(0, w.sim.lead(1).pendingCount());
    w.finish();
  }

  /**
   * B3ii client crash after one Start: only g0 knows m; g1 never answers g0's pulls; after T_fwd
   * g0 logs Forward and its Propose creates m at g1. The client's Start reaching g1 later is a
   * duplicate.
   */
  @Test
  void b3iiClientCrashAfterOneStart() {
    SimWorkload w = quiet(2);
    MsgInfo m = w.newMessage(1, new GroupId[] {G0, G1}, G0, PLAIN, false, 0);
    w.sim.grp[1].starts.clear(); // the client crashed after its Start to g0
    w.rounds(130);
    assertEquals(1, forwards(w, 0, m.start.id()), "one Forward after T_fwd");
    assertEquals(1, w.sim.proposesAt.get(m.start.id())[1], "its Propose created m at g1");
    assertTrue(decided(w, 1, m.start.id()) && decided(w, 0, m.start.id()));
    w.sim.grp[1].starts.add(m.start); // the late Start: a duplicate
    w.finish();
    assertEquals(1, w.sim.proposesAt.get(m.start.id())[1]);
  }

  /** B3ii's other order: the Start reaches g1 after the Forward was logged but before its Propose. */
  @Test
  void b3iiStartAndProposeRace() {
    SimWorkload w = quiet(2);
    MsgInfo m = w.newMessage(1, new GroupId[] {G0, G1}, G0, PLAIN, false, 0);
    w.sim.grp[1].starts.clear();
    w.sim.channelBlocked = (g, h) -> true;
    w.rounds(130);
    assertEquals(1, forwards(w, 0, m.start.id()));
    w.sim.grp[1].starts.add(m.start);
    w.rounds(1);
    w.sim.channelBlocked = (g, h) -> false;
    w.finish();
    assertEquals(1, w.sim.proposesAt.get(m.start.id())[1], "the Propose came and was a no-op");
  }

  /**
   * H4 two Decides: the deposed leader L1 appends Decide in term t, the new leader L2 (lagging, it
   * has not applied L1's entry) appends its own in t+1; both commit with the same V; the second is
   * a no-op.
   */
  @Test
  void h4TwoDecidesSameV() {
    SimWorkload w = quiet(2);
    w.sim.channelBlocked = (g, h) -> true;
    SimGroups.Replica l2 = w.sim.rep(1, 1);
    MsgInfo m = send(w, G0, G0, G1);
    w.sim.submit(0, false);
    w.sim.submit(1, false);
    w.sim.catchUpAll();
    l2.frozen = true;
    w.sim.now += 2 * SimGroups.MS;
    w.sim.deliverNetwork();
    w.sim.submit(1, false); // L1's Decide
    assertTrue(decided(w, 1, m.start.id()));
    w.sim.changeLeader(1, 1); // L2 has not applied it yet
    l2.frozen = false;
    SimGroups.Ex ex2 = w.sim.grp[1].ex;
    int before = l2.applied;
    assertEquals(before, w.sim.grp[1].log.size() - 1, "L2 lags by L1's Decide");
    // L2 collects g0's component (g0 answers its pull) while it lags.
    l2.frozen = true;
    for (int i = 0; i < 5 && w.sim.grp[1].decides.isEmpty(); i++) {
      w.sim.now += 20 * SimGroups.MS;
      ex2.ex.tick(ex2.view(), w.sim.now);
      w.sim.deliverNetwork();
      w.sim.now += 2 * SimGroups.MS;
      w.sim.deliverNetwork();
    }
    assertFalse(w.sim.grp[1].decides.isEmpty(), "L2 decided m from its own collection");
    l2.frozen = false;
    w.sim.submit(1, false);
    assertEquals(2, ownDecides(w, 1, m.start.id()), "both Decides are in g1's log");
    w.sim.channelBlocked = (g, h) -> false;
    w.finish();
  }

  /**
   * K1 decide-lost-no-leader-change: both destinations' Decide submissions fail, no leader change;
   * both decide within a few T_pull (rule 5: level-triggered). No channel helps.
   */
  @Test
  void k1DecideLostNoLeaderChange() {
    SimWorkload w = quiet(2);
    w.sim.channelBlocked = (g, h) -> true;
    int[] lost = new int[2];
    w.sim.loseBatch = g -> !w.sim.grp[g].decides.isEmpty() && lost[g]++ == 0;
    MsgInfo m = send(w, G0, G0, G1);
    long t0 = w.sim.now;
    untilDecided(w, 0, m.start.id(), 30);
    untilDecided(w, 1, m.start.id(), 30);
    assertEquals(1, lost[0] > 0 && lost[1] > 0 ? 1 : 0, "both first Decides were lost");
    assertTrue(w.sim.now - t0 <= 5 * T_PULL, () -> "decided after " + (w.sim.now - t0) / 1e6 + " ms");
    assertEquals(0, w.sim.leaderChanges);
    w.sim.channelBlocked = (g, h) -> false;
    w.finish();
  }

  /** K1's variant: only g0's Decide is ever lost; g1's Decided decides m at g0. */
  @Test
  void k1VariantOtherDestinationsDecidedDecides() {
    SimWorkload w = quiet(2);
    w.sim.loseBatch = g -> g == 0 && !w.sim.grp[0].decides.isEmpty();
    MsgInfo m = send(w, G0, G0, G1);
    untilDecided(w, 0, m.start.id(), 30);
    assertEquals(0, ownDecides(w, 0, m.start.id()));
    assertEquals(1, channelDecides(w, 0, m.start.id()), "g1's Decided decided it at g0");
    w.sim.loseBatch = g -> false;
    w.finish();
  }

  /** K3 late-decided-after-own-decide: the usual order; the late Decided ends retention. */
  @Test
  void k3LateDecidedAfterOwnDecideEndsRetention() {
    SimWorkload w = quiet(2);
    w.sim.channelBlocked = (g, h) -> true;
    MsgInfo m = send(w, G0, G0, G1);
    w.rounds(5);
    assertTrue(decided(w, 0, m.start.id()) && decided(w, 1, m.start.id()));
    assertEquals(1, w.sim.lead(0).retainedCount(), "delivered, but g1's Decided is not recorded yet");
    assertEquals(1, w.sim.lead(1).retainedCount());
    w.sim.channelBlocked = (g, h) -> false;
    w.rounds(2);
    assertEquals(0, w.sim.lead(0).retainedCount());
    assertEquals(0, w.sim.lead(1).retainedCount());
    w.finish();
  }

  /**
   * K5 election-longer-than-T_fwd: many pending messages, g1 leaderless and unreachable for 3 s:
   * at most one Propose per (message, destination) ever; and none when g1's followers answer.
   */
  @Test
  void k5ElectionLongerThanTfwd() {
    SimWorkload w = quiet(2);
    int count = 200;
    MsgInfo[] ms = new MsgInfo[count];
    for (int i = 0; i < count; i++) {
      ms[i] = w.newMessage(1, new GroupId[] {G0, G1}, G0, PLAIN, false, 0);
    }
    w.sim.submit(0, false); // g1's starts wait: it has no leader
    w.sim.loseLeader(1);
    w.sim.unreachable = g -> g == 1;
    long t0 = w.sim.now;
    while (w.sim.now - t0 < 3_000 * SimGroups.MS) {
      w.round();
    }
    long out = w.sim.lead(0).channelPositions(G1)[1];
    assertTrue(out <= count, () -> "the outbox to g1 grew to " + out + " items for " + count + " messages");
    w.sim.unreachable = g -> false;
    w.sim.elect(1, 1);
    w.finish();
    for (MsgInfo m : ms) {
      int[] p = w.sim.proposesAt.get(m.start.id());
      assertTrue(p == null || p[1] <= 1, () -> "more than one Propose of " + m.start.id() + " at g1");
    }

    // Followers answer: the same election forwards nothing.
    SimWorkload v = quiet(2);
    for (int i = 0; i < count; i++) {
      v.newMessage(1, new GroupId[] {G0, G1}, G0, PLAIN, false, 0);
    }
    v.sim.submit(0, false);
    v.sim.submit(1, false);
    v.sim.loseLeader(1);
    v.sim.knobs.followerPct = 100;
    t0 = v.sim.now;
    while (v.sim.now - t0 < 3_000 * SimGroups.MS) {
      v.round();
    }
    v.sim.elect(1, 2);
    v.finish();
    assertEquals(0, v.sim.forwardsSubmitted, "no Forward when the followers answer");
  }

  /**
   * K11 started-query-to-lagging-follower: the reply of m waits at g0's gate; the StartedQuery
   * reaches a follower of g1 that has not applied Start(m); it must not answer, and the reply
   * stays held until a replica of g1 really started m.
   */
  @Test
  void k11StartedQueryToLaggingFollower() {
    SimWorkload w = quiet(2);
    SimGroups.Replica lag = w.sim.rep(1, 1);
    lag.frozen = true;
    MsgInfo m = send(w, G0, G0, G1);
    w.sim.queryTarget = (h, attempt) -> h == 1 ? 1 : -1; // every query to g1 reaches the lagging follower
    w.rounds(10);
    assertTrue(w.sim.rep(0, 0).app.hasExecuted(m.start.id()), "g0 executed m");
    assertNull(m.finalReply, "the lagging follower gave no evidence: the reply is held");
    assertFalse(lag.state.started(m.start.id()));
    lag.frozen = false;
    w.rounds(12);
    assertNotNull(m.finalReply, "released once the follower applied m and finished it");
    w.sim.queryTarget = null;
    w.finish();
  }

  /** K11 with a follower restored from an older snapshot: it answers only once it caught up. */
  @Test
  void k11StartedQueryToFollowerRestoredFromAnOldSnapshot() {
    SimWorkload w = quiet(2);
    w.sim.takeSnapshot(1);
    MsgInfo m = send(w, G0, G0, G1);
    w.sim.queryTarget = (h, attempt) -> h == 1 ? 1 : -1;
    w.rounds(1);
    w.sim.restore(1, 1, 2);
    SimGroups.Replica old = w.sim.rep(1, 1);
    old.frozen = true;
    w.rounds(10);
    assertNull(m.finalReply, "a replica restored from a snapshot before Start(m) gives no evidence");
    old.frozen = false;
    w.rounds(12);
    assertNotNull(m.finalReply);
    w.sim.queryTarget = null;
    w.finish();
  }

  /**
   * K12 decision-only entries move no log time: a leader an hour ahead submits only decisions
   * (and forwards); the group's log time does not move.
   */
  @Test
  void k12DecisionOnlyEntriesMoveNoLogTime() {
    SimWorkload w = quiet(2);
    MsgInfo warm = send(w, G1, G1);
    w.rounds(2);
    long before = w.sim.lead(1).clients.logTime();
    assertTrue(before > 0);
    w.sim.now += 3_600_000 * SimGroups.MS; // an hour later (the leader's clock)
    MsgInfo m = w.newMessage(1, new GroupId[] {G0, G1}, G0, PLAIN, false, 0);
    w.sim.grp[1].starts.clear(); // g1 gets no client start: only a decision (and the Propose)
    w.rounds(150);
    assertTrue(decided(w, 1, m.start.id()));
    assertTrue(ownDecides(w, 1, m.start.id()) >= 1);
    assertEquals(before, w.sim.lead(1).clients.logTime(), "decision-only entries moved g1's log time");
    assertNotNull(warm.finalReply);
    w.finish();
  }

  /**
   * Deposed leader still pushing: its components are facts of committed state, and its
   * decisions, appended through the new leader, carry the same V.
   */
  @Test
  void deposedLeaderStillPushing() {
    SimWorkload w = quiet(3);
    for (int i = 0; i < 20; i++) {
      w.newMessage(1, new GroupId[] {G0, G1, G2}, G0, PLAIN, false, i % 3);
      w.round();
      if (i % 4 == 1) {
        w.sim.changeLeader(i % 3);
      }
    }
    w.rounds(30);
    assertTrue(w.sim.deposedSends > 0, "deposed leaders kept pushing");
    w.finish();
  }

  /**
   * Snapshot installed mid-protocol: the retention table and the clock are in the snapshot, the
   * collection is volatile and rebuilt by pulls.
   */
  @Test
  void snapshotInstalledMidProtocol() {
    SimWorkload w = quiet(3);
    w.sim.channelBlocked = (g, h) -> true;
    MsgInfo[] ms = new MsgInfo[6];
    for (int i = 0; i < ms.length; i++) {
      ms[i] = w.newMessage(1, new GroupId[] {G0, G1, G2}, G1, PLAIN, false, 1);
    }
    w.sim.submit(0, false);
    w.sim.submit(1, false);
    w.sim.submit(2, false);
    w.sim.takeSnapshot(1);
    w.sim.restore(1, w.sim.grp[1].leader, 0); // the leader restarts from its snapshot: a new exchange
    w.sim.restore(1, (w.sim.grp[1].leader + 1) % SimGroups.REPLICAS, 1); // a follower installs the leader's
    w.rounds(10);
    for (MsgInfo m : ms) {
      assertTrue(decided(w, 1, m.start.id()));
    }
    w.sim.channelBlocked = (g, h) -> false;
    w.finish();
  }

  /** A version of the message id (client 1, seq 0) with its own destinations and payload. */
  static Start version(SimWorkload w, long variant, GroupId reply, GroupId... dests) {
    return new Start(MsgId.valueOf(w.clientIds[1], 0, 0), dests, reply,
        w.sim.codec.encode(new long[] {1000 + variant, PLAIN}), 0);
  }

  /**
   * A quiet three-group simulation for schedules of {@link #version}s: their releases are not
   * reported to the workload, whose messages they are not.
   */
  static SimWorkload versionsOnly() {
    SimWorkload w = quiet(3);
    w.sim.sink = (g, k, id, r) -> {};
    return w;
  }

  /** Asserts that no group's leader keeps a message pending or queued. */
  static void assertNoneStalls(SimWorkload w) {
    for (int g = 0; g < 3; g++) {
      assertEquals(0, w.sim.lead(g).pendingCount() + w.sim.lead(g).queuedCount(), "g" + g + " stalls");
    }
  }

  static boolean executedAnywhereIn(SimWorkload w, int g, MsgId id) {
    for (SimGroups.Replica r : w.sim.grp[g].reps) {
      if (r.app.hasExecuted(id)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Reused id, overlapping destinations (rule 12): versions to {g0, g1, g2} and {g1, g2} under one
   * id, their Starts interleaved so that g1 and g2 hold different versions. Every leader sees a
   * component of another digest and decides conflicting: no group executes either version, and
   * none stalls (nothing stays pending or queued anywhere). Retention: see
   * GroupStateScheduleFindingsTest.
   */
  @Test
  @io.eyrie.multicast.testing.ExpectedErrors(SimChecks.REUSED_ID_ERRORS)
  void reusedIdOverlappingDestinations() {
    SimWorkload w = reusedIdOverlapping();
    w.rounds(300);
    assertNull(w.sim.violations.isEmpty() ? null : w.sim.violations);
    Start x = version(w, 1, G1, G0, G1, G2);
    for (int g = 0; g < 3; g++) {
      assertFalse(executedAnywhereIn(w, g, x.id()), "g" + g + " executed a version of a reused id");
    }
    assertNoneStalls(w);
    assertTrue(w.sim.grp[1].decisions.get(x.id()).conflict() && w.sim.grp[2].decisions.get(x.id()).conflict());
  }

  /** The schedule of {@link #reusedIdOverlappingDestinations}, healed. */
  static SimWorkload reusedIdOverlapping() {
    SimWorkload w = versionsOnly();
    Start x = version(w, 1, G1, G0, G1, G2);
    Start y = version(w, 2, G1, G1, G2);
    w.sim.grp[0].starts.add(x);
    w.sim.grp[1].starts.add(x);
    w.sim.grp[2].starts.add(y);
    w.sim.grp[1].starts.add(y);
    w.sim.grp[2].starts.add(x);
    w.heal();
    return w;
  }

  /**
   * Reused id after the retention drop (K4): version X to {g0, g1} is done and forgotten; version
   * Y to {g1, g2} follows. g1 says nothing of m in pulls; after T_fwd g2 forwards Y, and g1
   * answers the Propose with a Conflict: g2 decides Y conflicting, does not execute it, and does
   * not stall (nothing stays pending or queued). Retention: see GroupStateScheduleFindingsTest.
   */
  @Test
  @io.eyrie.multicast.testing.ExpectedErrors(SimChecks.REUSED_ID_ERRORS)
  void reusedIdAfterRetentionDrop() {
    SimWorkload w = reusedIdAfterDrop();
    w.rounds(300);
    Start y = version(w, 2, G2, G1, G2);
    assertFalse(executedAnywhereIn(w, 2, y.id()), "g2 executed Y though g1 executed X under the same id");
    assertTrue(w.sim.grp[2].decisions.get(y.id()).conflict());
    assertEquals(1, forwards(w, 2, y.id()));
    assertNoneStalls(w);
    assertTrue(w.sim.violations.isEmpty(), () -> "violations " + w.sim.violations);
  }

  /** The schedule of {@link #reusedIdAfterRetentionDrop}: X done and forgotten, Y submitted. */
  static SimWorkload reusedIdAfterDrop() {
    SimWorkload w = versionsOnly();
    Start x = version(w, 1, G0, G0, G1);
    Start y = version(w, 2, G2, G1, G2);
    w.sim.grp[0].starts.add(x);
    w.sim.grp[1].starts.add(x);
    w.heal();
    w.drainOrFail();
    assertTrue(executedAnywhereIn(w, 0, x.id()) && executedAnywhereIn(w, 1, x.id()));
    w.sim.grp[1].starts.add(y);
    w.sim.grp[2].starts.add(y);
    return w;
  }

  /**
   * K2 silent-channels-only-decided: a two-group workload with no Data. The only channel items
   * are the lazy Decided ones, which never wake a channel sender; shipped by the simulation's
   * ticker-like sender, they end retention, and the entries per message stay within 2d plus the
   * channels' share.
   */
  @Test
  void k2SilentChannelsOnlyDecided() {
    SimWorkload w = quiet(2);
    int count = 100;
    for (int i = 0; i < count; i++) {
      w.newMessage(1, new GroupId[] {G0, G1}, i % 2 == 0 ? G0 : G1, PLAIN, false, i % 3);
      w.round();
    }
    w.finish();
    assertEquals(0, w.sim.outboxWakeups, "a lazy Decided woke a channel sender");
    for (int g = 0; g < 2; g++) {
      int entries = w.sim.grp[g].log.size();
      assertTrue(entries <= (2 * 2 + 1) * count, () -> "entries " + entries + " for " + count + " messages");
      long[] pos = w.sim.lead(g).channelPositions(g == 0 ? G1 : G0);
      assertEquals(pos[0], pos[1], "outbox drained");
      assertTrue(pos[1] >= count, "every decision was acknowledged on the channel");
    }
  }

  /**
   * decides-and-starts-in-one-entry: a batch carrying a decision and a new start applies the
   * decision first, so the new start's timestamp is above the decided one and blocks nothing.
   */
  @Test
  void decidesAndStartsInOneEntryDecisionsFirst() {
    SimWorkload w = quiet(2);
    for (int i = 0; i < 5; i++) {
      send(w, G1, G1); // g1's clock ahead
    }
    w.rounds(2);
    w.sim.channelBlocked = (g, h) -> true;
    MsgInfo m = send(w, G0, G0, G1);
    w.sim.submit(0, false);
    w.sim.submit(1, false);
    w.sim.now += 2 * SimGroups.MS;
    w.sim.deliverNetwork();
    w.sim.now += 2 * SimGroups.MS;
    w.sim.deliverNetwork();
    assertEquals(1, w.sim.grp[0].decides.size(), "g0's decision is ready");
    MsgInfo s = send(w, G0, G0); // a new start rides the same entry
    w.sim.submit(0, false);
    Object last = w.sim.grp[0].log.get(w.sim.grp[0].log.size() - 1);
    assertTrue(last instanceof StartBatch b && b.decides().length == 1 && b.starts().length == 1);
    List<MsgId> order = w.sim.rep(0, 0).app.delivered();
    assertEquals(List.of(m.start.id(), s.start.id()), order.subList(order.size() - 2, order.size()),
        "m (decided at 6) first, then the new start (above it), delivered in the same entry");
    w.sim.channelBlocked = (g, h) -> false;
    w.finish();
  }

  /**
   * early-component-before-own-apply: g1's component reaches g0's leader before g0 applied
   * Start(m); it waits in the exchange, and g0 decides as soon as it applies Start(m), with no
   * further pull.
   */
  @Test
  void earlyComponentBeforeOwnApply() {
    SimWorkload w = quiet(2);
    w.sim.channelBlocked = (g, h) -> true;
    MsgInfo m = send(w, G0, G0, G1);
    w.sim.submit(1, false); // g1 applies first and pushes
    w.sim.now += 2 * SimGroups.MS;
    w.sim.deliverNetwork();
    assertNull(w.sim.lead(0).component(m.start.id()), "g0 has not applied Start(m)");
    long sent = w.sim.componentsSent;
    w.sim.submit(0, false); // g0 applies it: the early component completes the collection
    assertEquals(1, w.sim.grp[0].decides.size(), "g0 decided at once");
    w.sim.submit(0, false);
    assertTrue(decided(w, 0, m.start.id()));
    assertTrue(w.sim.componentsSent - sent <= 1, "no pull was needed (only the first push)");
    w.sim.channelBlocked = (g, h) -> false;
    w.finish();
  }

  /** m to {g0, g1}, reply group g0, whose reply is recorded at g0 while g1 has not started m (its Decides are lost). */
  static MsgInfo recordedBeforeG1Started(SimWorkload w) {
    for (int i = 0; i < 10; i++) {
      w.newMessage(2, new GroupId[] {G0}, G0, PLAIN, false, 0); // g0's clock ahead
    }
    w.rounds(2);
    w.sim.channelBlocked = (g, h) -> true;
    w.sim.loseBatch = g -> g == 1 && !w.sim.grp[1].decides.isEmpty();
    MsgInfo m = send(w, G0, G0, G1);
    w.rounds(5);
    assertTrue(w.sim.rep(0, 0).app.hasExecuted(m.start.id()), "g0 executed m and recorded its reply");
    assertFalse(w.sim.lead(1).started(m.start.id()));
    assertNull(m.finalReply);
    return m;
  }

  /** Lets g1 decide and start m, then a later message to g1 alone, then heals and checks (real time included). */
  static void thenG1StartsAndLaterMessage(SimWorkload w, MsgInfo m) {
    w.sim.loseBatch = g -> false;
    w.sim.channelBlocked = (g, h) -> false;
    for (int i = 0; i < 20 && m.finalReply == null; i++) {
      w.round();
    }
    assertNotNull(m.finalReply, "released once g1 started m");
    send(w, G1, G1);
    w.finish();
  }

  /**
   * K6 resend-via-other-node-before-started: the client resends m through another node (a
   * duplicate Start at g0, which hands the recorded reply on at every replica); the reply still
   * waits at that node's gate until g1 started m.
   */
  @Test
  void k6ResendViaOtherNodeBeforeStarted() {
    SimWorkload w = quiet(2);
    w.checkBegunAtRelease = false; // the real-time check must hold by itself
    MsgInfo m = recordedBeforeG1Started(w);
    w.resend(m, 2, false);
    w.rounds(3);
    assertNull(m.finalReply, "the resend through node 2 got the reply before g1 started m");
    thenG1StartsAndLaterMessage(w, m);
  }

  /** K6 restart-or-snapshot-at-waiting-replica: the waiting replica restarts; its gate still holds the reply. */
  @Test
  void k6RestartAtWaitingReplica() {
    SimWorkload w = quiet(2);
    w.checkBegunAtRelease = false;
    MsgInfo m = recordedBeforeG1Started(w);
    w.sim.restore(0, 0, 0);
    w.rounds(3);
    assertNull(m.finalReply, "a restart handed the stored reply out before g1 started m");
    w.sim.restore(0, 0, 1);
    thenG1StartsAndLaterMessage(w, m);
  }

  /**
   * K8 started-query-to-minority-leader: the waiting replica first asks g1's deposed leader, cut
   * off in a minority (it applies nothing); the query goes on to g1's other replicas and the reply
   * is released.
   */
  @Test
  void k8StartedQueryToMinorityLeader() {
    SimWorkload w = quiet(2);
    w.sim.changeLeader(1, 1);
    w.sim.silenceDeposed(1);
    w.sim.rep(1, 0).frozen = true;
    w.sim.queryTarget = (h, attempt) -> h == 1 && attempt == 0 ? 0 : -1;
    MsgInfo m = send(w, G0, G0, G1);
    for (int i = 0; i < 30 && m.finalReply == null; i++) {
      w.round();
    }
    assertNotNull(m.finalReply, "released through another replica of g1");
    assertFalse(w.sim.rep(1, 0).state.started(m.start.id()));
    w.sim.rep(1, 0).frozen = false;
    w.sim.queryTarget = null;
    w.finish();
  }

  /**
   * K9 ("if g has already decided, answer at once"): in the overlapping schedule, g2 decided Y
   * and still retains it (g1's Decided is held back) when g0's Decided of X arrives: g2 answers
   * with its own Decided at once, so g0's retention of X ends.
   */
  @Test
  @io.eyrie.multicast.testing.ExpectedErrors(SimChecks.REUSED_ID_ERRORS)
  void k9ForeignDecidedAfterOwnDecisionIsAnsweredAtOnce() {
    SimWorkload w = reusedIdOverlapping();
    w.sim.channelBlocked = (g, h) -> g == 1 && h == 2;
    w.rounds(100);
    assertEquals(1, w.sim.lead(2).retainedCount(), "g2 waits for g1's Decided");
    assertEquals(0, w.sim.lead(0).retainedCount(), () -> "g0 got g2's Decided though g2 decided first" + w.sim.describe() + w.sim.lead(0).describe() + w.sim.lead(2).describe());
    w.sim.channelBlocked = (g, h) -> false;
    w.drainOrFail();
    for (int g = 0; g < 3; g++) {
      assertEquals(0, w.sim.lead(g).retainedCount());
    }
  }

  /**
   * client-abandons-then-forward: the client's Start reached g0 only, then the client gave up on m
   * and moved on (its next message, to both groups, carries a watermark past m). After T_fwd g0
   * forwards m; g1 takes the Propose although its record of the client is past m (a Propose is
   * never refused, rule 2), and m is executed once at each destination.
   */
  @Test
  void clientAbandonsThenForward() {
    SimWorkload w = quiet(2);
    MsgInfo m = w.newMessage(1, new GroupId[] {G0, G1}, G0, PLAIN, false, 0);
    w.sim.grp[1].starts.clear();
    w.abandon(m);
    MsgInfo next = send(w, G1, G0, G1);
    assertTrue(next.start.watermark() > m.start.id().seq());
    w.rounds(130);
    assertEquals(1, forwards(w, 0, m.start.id()));
    assertTrue(decided(w, 1, m.start.id()), "g1 took the Propose");
    w.finish();
    for (int g = 0; g < 2; g++) {
      assertTrue(w.sim.rep(g, 0).app.hasExecuted(m.start.id()));
    }
  }

  /**
   * expiry-while-retained: m is delivered at g0 but retained (g1's Decided is held back) while
   * its client stays idle far longer than the expiry and other clients keep g0's log time moving:
   * the record is not expired while retained (rule 8), the late Decided is recorded, retention
   * ends, and the client's record may expire only after that.
   */
  @Test
  void expiryWhileRetained() {
    SimWorkload w = new SimWorkload(7, 2, 0, 1_000);
    SimGroups.Knobs k = w.sim.knobs;
    k.netLossPct = 0;
    k.netDupPct = 0;
    k.netMaxDelay = SimGroups.MS;
    k.followerPct = 0;
    k.batchLossPct = 0;
    k.batchDupPct = 0;
    k.channelFaults = false;
    w.sim.channelBlocked = (g, h) -> g == 1 && h == 0;
    MsgInfo m = send(w, G0, G0, G1);
    w.rounds(10);
    assertTrue(w.sim.rep(0, 0).app.hasExecuted(m.start.id()));
    assertEquals(1, w.sim.lead(0).retainedCount());
    for (int i = 0; i < 500; i++) { // 5 s of other clients at g0 (expiry 1 s)
      w.newMessage(2, new GroupId[] {G0}, G0, PLAIN, false, 0);
      w.round();
    }
    assertEquals(1, w.sim.lead(0).retainedCount(), "retention survives the client's idleness");
    assertNotNull(w.sim.lead(0).clients.get(m.start.id().client()), "the record of a retained message expired");
    w.sim.channelBlocked = (g, h) -> false;
    w.rounds(3);
    assertEquals(0, w.sim.lead(0).retainedCount(), "the late Decided ended retention");
    w.finish();
  }

  /**
   * K6 resend-after-reply-recorded: the node the client waited at crashes after g0 recorded the
   * reply (its gate is gone); the client resends through another node, a duplicate Start at g0,
   * and gets the recorded reply there once g1 started m (not never, not earlier).
   */
  @Test
  void k6ResendAfterReplyRecorded() {
    SimWorkload w = quiet(2);
    w.checkBegunAtRelease = false;
    MsgInfo m = recordedBeforeG1Started(w);
    w.sim.waiters.get(m.start.id()).clear(); // node 0 crashed: nobody waits there any more
    w.sim.rep(0, 0).gate.clear();
    w.resend(m, 1, false);
    w.rounds(3);
    assertNull(m.finalReply, "released before g1 started m");
    thenG1StartsAndLaterMessage(w, m);
    assertEquals(1, m.releases, "the client got its reply once, through node 1");
  }
}
