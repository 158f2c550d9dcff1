package io.eyrie.multicast.internal;

import static io.eyrie.multicast.internal.RulesSupport.CLIENT;
import static io.eyrie.multicast.internal.RulesSupport.G0;
import static io.eyrie.multicast.internal.RulesSupport.G1;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.SimGroups.Ev;
import io.eyrie.multicast.internal.Wire.ChannelBatch;
import io.eyrie.multicast.internal.Wire.Start;
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

  private void exchange(GroupState a, GroupState b) {
    for (int i = 0; i < 3; i++) {
      pump(a, b);
      pump(b, a);
    }
  }

  @Test
  void activeClientKeepsItsRecordAndIsNotExpired() {
    GroupState s = t.group(G0, new SimDeliverer(null), EXPIRY);
    for (long seq = 0; seq < 20; seq++) {
      t.time += 5 * 60_000L;
      t.submit(s, t.start(CLIENT, seq, seq, SimDeliverer.PLAIN, G0, G0));
      assertEquals(GroupState.OK, t.repliesFor(MsgId.valueOf(CLIENT, seq, 0)).get(0).reply().status());
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
    Start m = t.start(CLIENT, 0, 0, SimDeliverer.PLAIN, G0, G0);
    t.submit(s, m);
    Ev first = t.repliesFor(m.id()).get(0);
    assertEquals(GroupState.OK, first.reply().status());
    // Other clients keep the group busy for longer than the expiry; this client is idle.
    for (long i = 0; i < 12; i++) {
      t.time += 5 * 60_000L;
      t.submit(s, t.start(OTHER, i, i, SimDeliverer.PLAIN, G0, G0));
    }
    t.submit(s, m);
    List<Ev> r = t.repliesFor(m.id());
    assertEquals(1, app.delivered().stream().filter(m.id()::equals).count(),
        "a resend after the client expired was executed again (exactly-once broken); replies " + r);
    assertEquals(2, r.size());
    assertTrue(r.get(1).same(first) || r.get(1).reply().status() != GroupState.OK,
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
  @Test
  void watermarkLearnedThroughProposalsSurvivesTheSweep() {
    SimDeliverer app0 = new SimDeliverer(null);
    SimDeliverer app1 = new SimDeliverer(null);
    GroupState g0 = t.group(G0, app0, EXPIRY);
    GroupState g1 = t.group(G1, app1, EXPIRY);
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
    GroupState.ClientRecord rec = g1.clients.get(CLIENT);
    long watermark = rec == null ? -1 : rec.watermark;
    // A delayed duplicate of the finished m0 reaches g1: it must not be executed again (g1 is not
    // m0's reply group, so it answers nothing, or STALE).
    t.submit(g1, m0);
    exchange(g0, g1);
    List<Ev> r = t.repliesFor(m0.id()).stream().filter(e -> e.reply().status() == GroupState.OK).toList();
    long executionsAtG0 = app0.delivered().stream().filter(m0.id()::equals).count();
    long executionsAtG1 = app1.delivered().stream().filter(m0.id()::equals).count();
    String what = "g1 forgot the watermark (record " + (rec == null ? "swept" : "kept") + ", watermark " + watermark
        + "); m0 executed " + executionsAtG0 + "x at g0 and " + executionsAtG1 + "x at g1; final replies " + r.size();
    assertEquals(1, executionsAtG0, what);
    assertEquals(1, executionsAtG1, what);
    assertEquals(1, r.size(), what);
    assertTrue(r.get(0).same(reply0), what);
  }
}
