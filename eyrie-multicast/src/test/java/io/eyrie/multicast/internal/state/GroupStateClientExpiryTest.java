package io.eyrie.multicast.internal.state;

import static io.eyrie.multicast.internal.state.RulesSupport.CLIENT;
import static io.eyrie.multicast.internal.state.RulesSupport.G0;
import static io.eyrie.multicast.internal.state.RulesSupport.G1;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.internal.Wire.ChannelBatch;
import io.eyrie.multicast.internal.Wire.Start;
import io.eyrie.multicast.internal.state.SimGroups.Ev;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Client records and their expiry (DESIGN Appendix A: "if m's seq is below the client's
 * watermark, or the client expired: error reply"). Log times are wall-clock milliseconds, as the
 * submitting nodes stamp them.
 */
@Timeout(120)
class GroupStateClientExpiryTest {
  private static final long EXPIRY = 30 * 60_000L;
  private static final long OTHER = 0x07E4;
  private final RulesSupport t = new RulesSupport();

  {
    t.time = 1_700_000_000_000L;
  }

  /** Ships every outbox item from one state to another (one batch, from the oldest kept). */
  private static long pump(GroupState from, GroupState to) {
    long[] pos = from.channelPositions(to.self());
    List<Object> items = from.outboxRange(to.self(), pos[0], Integer.MAX_VALUE);
    return to.apply(new ChannelBatch(from.self(), pos[0], items.toArray(), pos[2]));
  }

  private static long executions(SimDeliverer app, MsgId id) {
    return app.delivered().stream().filter(id::equals).count();
  }

  /**
   * Other clients keep {@code g} busy for {@code minutes}, one start batch a minute (the log time
   * moves at most {@link ClientTable#MAX_LOG_TIME_STEP_MS} per batch).
   */
  private void othersUse(GroupState g, int minutes) {
    for (int i = 0; i < minutes; i++) {
      t.time += 60_000L;
      long seq = otherSeq++;
      t.submit(g, t.start(OTHER, seq, seq, SimDeliverer.PLAIN, g.self(), g.self()));
    }
  }

  private long otherSeq;

  /** The two groups' leaders exchange components, decide, forward (after T_fwd) and ship their channels. */
  private void exchange(GroupState a, GroupState b) {
    RulesSupport.settle(a, b);
  }

  private SimDeliverer app0;
  private SimDeliverer app1;
  private GroupState g0;
  private GroupState g1;

  /** Sets up g0 and g1 with their deliverers app0 and app1, both with the expiry {@link #EXPIRY}. */
  private void twoGroups() {
    app0 = new SimDeliverer(null);
    app1 = new SimDeliverer(null);
    g0 = t.group(G0, app0, EXPIRY);
    g1 = t.group(G1, app1, EXPIRY);
  }

  /** The client's message m0 to g0 and g1, submitted at its reply group g0 only; checks it was answered OK. */
  private Start firstMessageThroughG0() {
    Start m0 = t.start(CLIENT, 0, 0, SimDeliverer.PLAIN, G0, G0, G1);
    t.submit(g0, m0);
    exchange(g0, g1);
    assertEquals(Status.OK, t.repliesFor(m0.id()).get(0).reply().status());
    return m0;
  }

  /** Submits the client's first message m, to g0 alone, at s. */
  private Start submitFirst(GroupState s) {
    Start m = t.start(CLIENT, 0, 0, SimDeliverer.PLAIN, G0, G0);
    t.submit(s, m);
    return m;
  }

  /** Submits the client's first message (of the given mode) to g0 and g1 at both. */
  private Start submitFirstAtBoth(long mode) {
    Start m = t.start(CLIENT, 0, 0, mode, G0, G0, G1);
    t.submit(g0, m);
    t.submit(g1, m);
    return m;
  }

  @Test
  void activeClientKeepsItsRecordAndIsNotExpired() {
    GroupState s = t.group(G0, new SimDeliverer(null), EXPIRY);
    for (long seq = 0; seq < 20; seq++) {
      t.time += 5 * 60_000L;
      t.submit(s, t.start(CLIENT, seq, seq, SimDeliverer.PLAIN, G0, G0));
      assertEquals(Status.OK, t.repliesFor(MsgId.valueOf(CLIENT, seq, 0)).get(0).reply().status());
    }
    assertNotNull(s.clients.get(CLIENT));
  }

  /**
   * FAILS against the current main code (GroupState.sweepClients / applyStart): a client whose
   * records expired is treated as a new client, so its resend of an executed command is
   * executed a second time and answered with a new reply, instead of the error reply that
   * DESIGN Appendix A requires for an expired client.
   */
  @Test
  void resendAfterTheClientExpiredIsNotExecutedAgain() {
    SimDeliverer app = new SimDeliverer(null);
    GroupState s = t.group(G0, app, EXPIRY);
    Start m = submitFirst(s);
    Ev first = t.repliesFor(m.id()).get(0);
    assertEquals(Status.OK, first.reply().status());
    // Other clients keep the group busy for longer than the expiry; this client is idle.
    othersUse(s, 60);
    t.submit(s, m);
    List<Ev> r = t.repliesFor(m.id());
    assertEquals(1, app.delivered().stream().filter(m.id()::equals).count(),
        "a resend after the client expired was executed again (exactly-once broken); replies " + r);
    assertEquals(2, r.size());
    assertTrue(r.get(1).same(first) || r.get(1).reply().status() != Status.OK,
        "an expired client's resend must be answered with its recorded reply or an error, not a new reply");
  }

  /**
   * FAILS against the current main code. A group that learns a client's messages only through
   * proposals creates its record in GroupState.applyPropose via client(id) with lastSeen = 0
   * (only applyStart sets lastSeen), so GroupState.sweepClients drops it at the next sweep
   * (lastSeen + expiry < logTime always holds for wall-clock log times) although the client is
   * active: its watermark is forgotten. A delayed duplicate Start of a finished message that then
   * reaches that group is not answered STALE but becomes pending again and is proposed again;
   * and GroupState.applyPropose does not check the watermark either, so the other destination,
   * which had pruned the message from its delivered set, executes it a second time too and
   * records a second, different final reply.
   */
  /**
   * Found by SnapshotCatchUpTest (EXPIRED for a live client). A group whose first entries are
   * channel batches has log time 0 (channel batches carry no time), so a record a proposal
   * creates there has lastSeen 0. The group's first start batch then moves its log time to the
   * present, and the sweep used to see the client idle since 1970 and tombstone it, refusing its
   * next Start with EXPIRED.
   */
  @Test
  void recordCreatedBeforeTheFirstStartBatchIsNotExpiredByIt() {
    twoGroups();
    // g1 learns m0 only through g0's proposal, before it applied any start batch.
    Start m0 = firstMessageThroughG0();
    assertEquals(List.of(m0.id()), app1.delivered());
    // g1's first start batch (another client's), a minute later.
    t.time += 60_000L;
    t.submit(g1, t.start(OTHER, 0, 0, SimDeliverer.PLAIN, G1, G1));
    assertFalse(g1.clients.tombstones.containsKey(CLIENT), "the live client was expired by g1's first start batch");
    // The client's next message to g1 alone is executed, not refused.
    Start m1 = t.start(CLIENT, 1, 1, SimDeliverer.PLAIN, G1, G1);
    t.submit(g1, m1);
    assertEquals(Status.OK, t.repliesFor(m1.id()).get(0).reply().status(),
        t.repliesFor(m1.id()).get(0).reply().error());
    assertEquals(1, executions(app1, m1.id()));
  }

  @Test
  void watermarkLearnedThroughProposalsSurvivesTheSweep() {
    twoGroups();
    t.submit(g1, t.start(OTHER, 0, 0, SimDeliverer.PLAIN, G1, G1));
    // The client submits m0 and m1 to their reply group g0; g1 learns them through proposals.
    Start m0 = t.start(CLIENT, 0, 0, SimDeliverer.PLAIN, G0, G0, G1);
    t.submit(g0, m0);
    exchange(g0, g1);
    Ev reply0 = t.repliesFor(m0.id()).get(0);
    Start m1 = t.start(CLIENT, 1, 1, SimDeliverer.PLAIN, G0, G0, G1);
    t.submit(g0, m1);
    exchange(g0, g1);
    assertEquals(List.of(m0.id(), m1.id()), app1.delivered().subList(1, 3));
    assertEquals(1, g1.clients.get(CLIENT).watermark);
    // Ten minutes later (the client is active at g0 meanwhile), another client uses g1.
    t.time += 10 * 60_000L;
    t.submit(g0, t.start(CLIENT, 2, 2, SimDeliverer.PLAIN, G0, G0));
    t.submit(g1, t.start(OTHER, 1, 1, SimDeliverer.PLAIN, G1, G1));
    ClientTable.ClientRecord rec = g1.clients.get(CLIENT);
    long watermark = rec == null ? -1 : rec.watermark;
    // A delayed duplicate of the finished m0 reaches g1: it must not be executed again (g1 is not
    // m0's reply group, so it answers nothing, or STALE).
    t.submit(g1, m0);
    exchange(g0, g1);
    List<Ev> r = t.repliesFor(m0.id()).stream().filter(e -> e.reply().status() == Status.OK).toList();
    long executionsAtG0 = app0.delivered().stream().filter(m0.id()::equals).count();
    long executionsAtG1 = app1.delivered().stream().filter(m0.id()::equals).count();
    String what = "g1 forgot the watermark (record " + (rec == null ? "swept" : "kept") + ", watermark " + watermark
        + "); m0 executed " + executionsAtG0 + "x at g0 and " + executionsAtG1 + "x at g1; final replies " + r.size();
    assertEquals(1, executionsAtG0, what);
    assertEquals(1, executionsAtG1, what);
    assertEquals(1, r.size(), what);
    assertTrue(r.get(0).same(reply0), what);
  }

  /**
   * Found by the simulation with {@code -Deyrie.sim.expiryMs=400}. The client's record at g0
   * expires (tombstone) while the client stays active at g1; one of its messages then reaches g0
   * as a proposal, which must be accepted (refusing it would block g1 forever) and so recreates
   * the record. GroupState.applyStart used to refuse an expired client only while it had no
   * record, so the recreated record, which knows nothing of what g0 executed before the expiry,
   * let a resend of an old message through as a new one: g0 made it pending again and proposed it
   * to g1, which had delivered it and dropped the proposal, so the message stayed undecided at g0
   * forever and blocked every later message there (and where the other destination had forgotten
   * the message too, it was executed a second time).
   */
  @Test
  void recordRecreatedByAProposalDoesNotLetAnOldResendThrough() {
    twoGroups();
    Start m0 = firstMessageThroughG0();
    // The client is idle at g0 for longer than the expiry.
    othersUse(g0, 40);
    assertNull(g0.clients.get(CLIENT));
    assertTrue(g0.clients.tombstones.containsKey(CLIENT));
    // It is active at g1: m1 to both, answered by g1. g1's proposal reaches g0 first and is
    // accepted (refusing it would block g1); the Start that follows is a duplicate. (Before review
    // F3 a Start reaching g0 first was refused EXPIRED, though m1 was then executed from g1's
    // proposal; now a seq above every seq g0 made pending is accepted, see
    // newMessageOfAClientExpiredAtItsReplyGroupIsNotRefusedWhileExecuted.)
    Start m1 = t.start(CLIENT, 1, 0, SimDeliverer.PLAIN, G1, G0, G1);
    t.submit(g1, m1);
    pump(g1, g0);
    t.submit(g0, m1);
    exchange(g0, g1);
    assertEquals(1, executions(app0, m1.id()), "a proposal for an expired client must be delivered");
    assertEquals(1, executions(app1, m1.id()));
    assertTrue(t.repliesFor(m1.id()).stream().allMatch(e -> e.reply().status() == Status.OK),
        () -> "replies " + t.repliesFor(m1.id()));
    assertNotNull(g0.clients.get(CLIENT), "the proposal recreated the record");
    // The answer to m0 was lost: the client (watermark still 0) resends it to g0.
    t.submit(g0, m0);
    exchange(g0, g1);
    List<Ev> r = t.repliesFor(m0.id());
    assertEquals(2, r.size(), () -> "replies " + r);
    // EXPIRED: g0 cannot tell whether it executed m0 (it did), an unknown outcome to the client.
    assertEquals(Status.EXPIRED, r.get(1).reply().status(), () -> "replies " + r);
    assertEquals(1, executions(app0, m0.id()));
    assertEquals(1, executions(app1, m0.id()));
    assertEquals(0, g0.pendingCount(), "the resend of m0 became pending again");
    // Neither group is blocked: a later message to both is delivered at both.
    Start m2 = t.start(OTHER, otherSeq, otherSeq, SimDeliverer.PLAIN, G0, G0, G1);
    t.submit(g0, m2);
    exchange(g0, g1);
    assertEquals(1, executions(app0, m2.id()), "g0 is blocked");
    assertEquals(1, executions(app1, m2.id()));
    assertEquals(0, g0.pendingCount() + g1.pendingCount() + g0.queuedCount() + g1.queuedCount());
  }

  /**
   * Items another destination sends for a message (here two values, nobody waits) can arrive
   * after the message finished here and its client's record expired. They must be dropped, not
   * buffered for ever.
   */
  @Test
  void lateItemsAfterTheRecordExpiredAreDropped() {
    twoGroups();
    Start m = submitFirstAtBoth(SimDeliverer.SEND_NO_WAIT);
    long lts0 = g0.component(m.id()).lts();
    long lts1 = g1.component(m.id()).lts();
    t.decide(g1, m, lts0);
    assertTrue(app1.hasExecuted(m.id()));
    assertFalse(app0.hasExecuted(m.id()));
    t.decide(g0, m, lts1);
    assertTrue(app0.hasExecuted(m.id()));
    // g0's outbox to g1: its Decided, then its two values. g1 records the Decided (its retention
    // of m ends), then the client's record expires there, then the values arrive.
    List<Object> items = g0.outboxRange(G1, 0, 10);
    assertTrue(items.get(0) instanceof io.eyrie.multicast.internal.Wire.Decided, () -> "items " + items);
    RulesSupport.ship(g1, G0, 0, items.get(0));
    othersUse(g1, 40);
    assertNull(g1.clients.get(CLIENT));
    pump(g1, g0);
    pump(g0, g1);
    assertTrue(g1.exec.inboxes.isEmpty(), () -> "late items buffered for ever: " + g1.exec.inboxes.ids());
    assertEquals(Status.OK, t.repliesFor(m.id()).get(0).reply().status());
  }

  /** An expiry of Long.MAX_VALUE (never) must not overflow into expiring everyone. */
  @Test
  void hugeExpiryNeverExpires() {
    SimDeliverer app = new SimDeliverer(null);
    GroupState s = t.group(G0, app, Long.MAX_VALUE);
    Start m = submitFirst(s);
    othersUse(s, 60);
    t.submit(s, m);
    List<Ev> r = t.repliesFor(m.id());
    assertEquals(2, r.size());
    assertTrue(r.get(1).same(r.get(0)), () -> "replies " + r);
    assertNotNull(s.clients.get(CLIENT));
    assertTrue(s.clients.tombstones.isEmpty());
  }

  /**
   * With a short expiry, a tombstone must still outlive the resends of the client's commands
   * (it used to be kept only ten expiry periods); it goes once {@link ClientTable#MIN_TOMBSTONE_MS}
   * passed without a record.
   */
  @Test
  void tombstoneOutlivesResendsWithAShortExpiry() {
    SimDeliverer app = new SimDeliverer(null);
    GroupState s = t.group(G0, app, 1_000);
    Start m = submitFirst(s);
    for (int i = 0; i < 60; i++) {
      t.time += 1_000;
      t.submit(s, t.start(OTHER, i, i, SimDeliverer.PLAIN, G0, G0));
    }
    assertNull(s.clients.get(CLIENT));
    t.submit(s, m);
    List<Ev> r = t.repliesFor(m.id());
    assertEquals(2, r.size());
    assertEquals(Status.EXPIRED, r.get(1).reply().status(), () -> "replies " + r);
    assertEquals(1, executions(app, m.id()));
    otherSeq = 60;
    othersUse(s, (int) (ClientTable.MIN_TOMBSTONE_MS / 60_000L) + 1);
    assertFalse(s.clients.tombstones.containsKey(CLIENT));
  }
  /**
   * Review F3(a): the reply group g0 expired the client while g1 still knows it. The client's new
   * message m1 to both reaches g1 first (which proposes it to g0), then g0 applies the client's
   * Start before g1's proposal arrives. g0 used to answer EXPIRED (documented as a definite
   * refusal) and then deliver and execute m1 from g1's proposal. A seq above every seq this group
   * ever made pending cannot have been executed here, so the Start is accepted.
   */
  @Test
  void newMessageOfAClientExpiredAtItsReplyGroupIsNotRefusedWhileExecuted() {
    twoGroups();
    Start m0 = submitFirstAtBoth(SimDeliverer.PLAIN);
    exchange(g0, g1);
    assertEquals(Status.OK, t.repliesFor(m0.id()).get(0).reply().status());
    othersUse(g0, 40);
    assertTrue(g0.clients.tombstones.containsKey(CLIENT));
    Start m1 = t.start(CLIENT, 1, 1, SimDeliverer.PLAIN, G0, G0, G1);
    t.submit(g1, m1);
    t.submit(g0, m1);
    exchange(g0, g1);
    List<Ev> r = t.repliesFor(m1.id());
    assertEquals(1, executions(app0, m1.id()));
    assertEquals(1, executions(app1, m1.id()));
    assertTrue(r.stream().noneMatch(e -> e.reply().status() == Status.EXPIRED),
        () -> "an executed message was refused EXPIRED: " + r);
    assertEquals(Status.OK, r.get(r.size() - 1).reply().status(), () -> "replies " + r);
    // The resend of m0 (which g0 made pending before the expiry) is still refused.
    t.submit(g0, m0);
    assertEquals(Status.EXPIRED, t.repliesFor(m0.id()).get(1).reply().status());
    assertEquals(1, executions(app0, m0.id()));
  }

  /**
   * Review F3(c): one node's clock stepped two hours forward stamps a start batch. The log time
   * advances by at most {@link ClientTable#MAX_LOG_TIME_STEP_MS} per entry, so the clients this
   * group served a minute ago are not expired by that one entry.
   */
  @Test
  void aClockStepForwardDoesNotExpireEveryClient() {
    SimDeliverer app = new SimDeliverer(null);
    GroupState s = t.group(G0, app, EXPIRY);
    Start m = submitFirst(s);
    t.time += 60_000L;
    t.submit(s, t.start(OTHER, 0, 0, SimDeliverer.PLAIN, G0, G0));
    long before = s.clients.logTime();
    t.time += 2 * 60 * 60_000L;
    t.submit(s, t.start(OTHER, 1, 1, SimDeliverer.PLAIN, G0, G0));
    assertTrue(s.clients.logTime() - before <= 60_000L, () -> "log time jumped by " + (s.clients.logTime() - before) + " ms");
    assertNotNull(s.clients.get(CLIENT), "one skewed clock expired the client");
    assertFalse(s.clients.tombstones.containsKey(CLIENT));
    t.submit(s, m);
    List<Ev> r = t.repliesFor(m.id());
    assertTrue(r.get(1).same(r.get(0)), () -> "replies " + r);
  }
}
