package io.eyrie.multicast.internal.state;

import static io.eyrie.multicast.internal.state.RulesSupport.ALL;
import static io.eyrie.multicast.internal.state.RulesSupport.CLIENT;
import static io.eyrie.multicast.internal.state.RulesSupport.G0;
import static io.eyrie.multicast.internal.state.RulesSupport.G1;
import static io.eyrie.multicast.internal.state.RulesSupport.G2;
import static io.eyrie.multicast.internal.state.RulesSupport.G3;
import static io.eyrie.multicast.internal.state.RulesSupport.ship;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.internal.Wire.ChannelBatch;
import io.eyrie.multicast.internal.Wire.Data;
import io.eyrie.multicast.internal.Wire.Propose;
import io.eyrie.multicast.internal.Wire.Start;
import io.eyrie.multicast.internal.state.RulesSupport.ParkingApp;
import io.eyrie.multicast.internal.state.SimGroups.Ev;
import io.eyrie.multicast.testing.ExpectedErrors;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Targeted scenarios for single rules of {@link GroupState}, applied by hand. */
@Timeout(120)
class GroupStateRulesTest {
  private final RulesSupport t = new RulesSupport();

  private static final long PLAIN = SimDeliverer.PLAIN;

  private Status status(MsgId id) {
    List<Ev> r = t.repliesFor(id);
    assertEquals(1, r.size(), () -> "expected one reply for " + id + ", got " + r);
    return r.get(0).reply().status();
  }

  private Object body(Ev e) {
    return t.codec.decode(e.reply().body());
  }

  /** A state with some history: a pending multi-group message and a delivered single one. */
  private GroupState withHistory() {
    GroupState s = t.group(G0, new SimDeliverer(null));
    t.submit(s, t.start(100, PLAIN, G0, G0, G1), t.start(101, PLAIN, G0, G0));
    ship(s, G2, 0, new Propose(t.start(102, PLAIN, G2, G0, G2)));
    return s;
  }

  @Test
  void invalidStartsAreRefusedWithBadRequestAndChangeNothing() {
    byte[] payload = t.codec.encode(new long[] {0, PLAIN});
    GroupId unknown = GroupId.valueOf("g9");
    Start[] bad = {
        t.start(1, PLAIN, G0, G0, unknown),
        t.start(2, PLAIN, G0, G1, G0),
        t.start(3, PLAIN, G0, G0, G0),
        t.start(4, PLAIN, G1, G1, G2),
        t.start(5, PLAIN, G3, G0, G1),
        t.start(6, PLAIN, G0),
        new Start(MsgId.valueOf(CLIENT, 7, 0), new GroupId[] {G0}, G0, null, 0),
        new Start(MsgId.valueOf(CLIENT, -8, 0), new GroupId[] {G0}, G0, payload, 0),
        new Start(MsgId.valueOf(CLIENT + 1, 9, 0), new GroupId[] {G0, null}, G0, payload, 0),
    };
    for (Start b : bad) {
      GroupState s = withHistory();
      GroupState twin = withHistory();
      int pending = s.pendingCount();
      t.submit(s, b);
      t.submit(twin);
      assertEquals(Status.BAD_REQUEST, status(b.id()), () -> "for " + List.of(b.dests()));
      assertArrayEquals(t.snapshot(twin), t.snapshot(s), () -> "a refused start changed the state: " + List.of(b.dests()));
      assertEquals(pending, s.pendingCount());
    }
    // An id reused with other content is refused too; the twin gets a true duplicate.
    GroupState s = withHistory();
    GroupState twin = withHistory();
    Start same = t.start(100, PLAIN, G0, G0, G1);
    Start other = new Start(same.id(), same.dests(), same.replyGroup(), t.codec.encode(new long[] {1, 1}), 0);
    t.submit(s, other);
    t.submit(twin, same);
    assertEquals(Status.BAD_REQUEST, status(same.id()));
    assertArrayEquals(t.snapshot(twin), t.snapshot(s), "a start reusing an id with other content changed the state");
  }

  @Test
  void startBelowTheClientsWatermarkIsStale() {
    SimDeliverer app = new SimDeliverer(null);
    GroupState s = t.group(G0, app);
    Start m5 = t.start(CLIENT, 5, 5, PLAIN, G0, G0);
    t.submit(s, m5);
    assertEquals(Status.OK, status(m5.id()));
    Start m3 = t.start(CLIENT, 3, 3, PLAIN, G0, G0);
    t.submit(s, m3);
    assertEquals(Status.STALE, status(m3.id()), "a new message below the known watermark");
    Start m7 = t.start(CLIENT, 7, 8, PLAIN, G0, G0, G1);
    t.submit(s, m7);
    assertEquals(Status.STALE, status(m7.id()), "a message below its own watermark");
    t.submit(s, m5);
    assertEquals(2, t.repliesFor(m5.id()).size());
    assertEquals(Status.STALE, t.repliesFor(m5.id()).get(1).reply().status(), "a finished message resent late");
    assertEquals(List.of(m5.id()), app.delivered());
    assertEquals(0, s.pendingCount());
    assertArrayEquals(new long[] {0, 0, 0}, s.channelPositions(G1), "nothing was proposed for a stale message");
  }

  @Test
  void singleGroupMessageWaitsOnlyForPendingMessagesWithSmallerLocalTimestamps() {
    // Decided at once and delivered at once when nothing is pending.
    SimDeliverer app = new SimDeliverer(null);
    GroupState s = t.group(G0, app);
    Start s1 = t.start(1, PLAIN, G0, G0);
    t.submit(s, s1);
    assertEquals(List.of(s1.id()), app.delivered());
    Start m2 = t.start(2, PLAIN, G0, G0, G1);
    t.submit(s, m2);
    Start s3 = t.start(3, PLAIN, G0, G0);
    t.submit(s, s3);
    assertEquals(List.of(s1.id()), app.delivered(), "s3 (ts 3) must wait for pending m2 (local ts 2)");
    Start m4 = t.start(4, PLAIN, G0, G0, G2);
    t.submit(s, m4);
    t.decide(s, m2, 1);
    assertEquals(List.of(s1.id(), m2.id(), s3.id()), app.delivered(),
        "m2 decided at 2 goes first; s3 (ts 3) is not held back by pending m4 (local ts 4)");
    assertEquals(1, s.pendingCount());
    Start s5 = t.start(5, PLAIN, G0, G0);
    t.submit(s, s5);
    assertEquals(3, app.delivered().size(), "s5 (ts 5) waits for pending m4 (local ts 4)");
    t.decide(s, m4, 9);
    assertEquals(List.of(s1.id(), m2.id(), s3.id(), s5.id(), m4.id()), app.delivered(), "m4 decided at 9 goes last");
    Start s6 = t.start(6, PLAIN, G0, G0);
    t.submit(s, s6);
    assertEquals(s6.id(), app.delivered().get(5), "the clock was raised to 9: s6 follows at once");

    // A proposal equal to the local timestamp: the multi-group message goes first.
    SimDeliverer app2 = new SimDeliverer(null);
    GroupState s2 = t.group(G0, app2);
    t.submit(s2, m2);
    t.submit(s2, s3);
    assertEquals(List.of(), app2.delivered());
    t.decide(s2, m2, 1);
    assertEquals(List.of(m2.id(), s3.id()), app2.delivered());
  }

  @Test
  void parkedMessageResumesOnlyOnDataFromTheAwaitedGroupAndLaterMessagesWait() {
    ParkingApp app = new ParkingApp();
    GroupState s = t.group(G0, app);
    Start m1 = t.start(1, ParkingApp.awaiting(G1), G0, G0, G1, G2);
    t.submit(s, m1);
    t.decide(s, m1, 1);
    assertEquals(List.of("deliver " + m1.id()), app.log);
    assertEquals(Set.of(G1), s.exec.parkedOn);
    Start s2 = t.start(2, PLAIN, G0, G0);
    t.submit(s, s2);
    assertEquals(2, s.queuedCount(), "s2 is delivered but waits behind the parked m1");
    ship(s, G2, 0, new Data(m1.id(), t.codec.encode(22L)));
    ship(s, G1, 0, new Data(s2.id(), t.codec.encode(99L)));
    assertEquals(1, app.log.size(), "neither data from another group nor data for another message resumes m1");
    assertEquals(List.of(), t.repliesFor(m1.id()));
    ship(s, G1, 1, new Data(m1.id(), t.codec.encode(11L)));
    assertEquals(List.of("deliver " + m1.id(), "resume " + m1.id() + " g0=[] g1=[11] g2=[22]", "deliver " + s2.id()),
        app.log);
    assertEquals(2L, body(t.repliesFor(m1.id()).get(0)));
    assertEquals(3L, body(t.repliesFor(s2.id()).get(0)));
    assertEquals(0, s.queuedCount());
    assertTrue(s.exec.inboxes.isEmpty(), "buffered items are dropped when their message finishes");
    assertEquals(null, s.exec.parkedOn);
  }

  /**
   * Rule 11: the replicated state records a multi-group reply and hands it on at once (the gate
   * that holds it until every destination started is per replica, outside the state); a resent
   * Start hands the recorded reply on again; a non-reply destination answers nothing and says
   * "started" only on positive evidence (its applied state shows m started or finished).
   */
  @Test
  void multiGroupReplyIsHandedToTheGateAtOnceAndStartedNeedsEvidence() {
    SimDeliverer app = new SimDeliverer(null);
    GroupState s = t.group(G0, app);
    Start m = t.start(1, PLAIN, G0, G0, G1, G2);
    t.submit(s, m);
    assertFalse(s.started(m.id()), "undecided: not started");
    t.decide(s, m, 1);
    assertTrue(app.hasExecuted(m.id()));
    assertEquals(Status.OK, status(m.id()));
    assertTrue(s.started(m.id()));
    t.submit(s, m);
    List<Ev> r = t.repliesFor(m.id());
    assertEquals(2, r.size());
    assertTrue(r.get(1).same(r.get(0)), "a resent start is handed the recorded reply");
    ship(s, G1, 0, new Data(m.id(), t.codec.encode(6L)));
    assertEquals(2, t.repliesFor(m.id()).size(), "a late item does not answer again");

    GroupState g1 = t.group(G1, new SimDeliverer(null));
    Start m3 = t.start(3, PLAIN, G0, G0, G1);
    t.submit(g1, m3);
    assertFalse(g1.started(m3.id()));
    t.decide(g1, m3, 1);
    t.submit(g1, m3);
    assertEquals(List.of(), t.repliesFor(m3.id()));
    assertTrue(g1.started(m3.id()));
    List<Object> out = g1.outboxRange(G0, 0, 10);
    assertEquals(List.of(io.eyrie.multicast.internal.Wire.Decided.class), out.stream().map(Object::getClass).toList(),
        "no Propose and no Started: only the lazy Decided");
  }

  @Test
  void snapshotRoundTripPreservesAParkedHeadWithBufferedItems() {
    ParkingApp app = new ParkingApp();
    GroupState s = t.group(G0, app);
    Start m1 = t.start(1, ParkingApp.awaiting(G1, G2), G0, G0, G1, G2);
    t.submit(s, m1);
    t.decide(s, m1, 1, 2);
    Start s2 = t.start(2, PLAIN, G0, G0);
    Start m3 = t.start(3, PLAIN, G3, G0, G3);
    t.submit(s, s2, m3);
    ship(s, G1, 0, new Data(m1.id(), t.codec.encode(11L)), new Data(m1.id(), t.codec.encode(12L)));
    assertEquals(Set.of(G1, G2), s.exec.parkedOn);

    ParkingApp app2 = new ParkingApp();
    GroupState r = t.restore(s, app2);
    assertArrayEquals(t.snapshot(s), t.snapshot(r));
    assertEquals(s.exec.parkedOn, r.exec.parkedOn);
    assertTrue(r.exec.headStarted);
    assertEquals(2, r.queuedCount());
    assertEquals(1, r.pendingCount());
    assertEquals(app.log, app2.log);

    int mark = t.replies.size();
    ship(s, G2, 0, new Data(m1.id(), t.codec.encode(21L)));
    List<Ev> fromOriginal = List.copyOf(t.replies.subList(mark, t.replies.size()));
    mark = t.replies.size();
    ship(r, G2, 0, new Data(m1.id(), t.codec.encode(21L)));
    List<Ev> fromRestored = List.copyOf(t.replies.subList(mark, t.replies.size()));
    assertEquals(2, fromOriginal.size());
    assertEquals(fromOriginal.size(), fromRestored.size());
    for (int i = 0; i < fromOriginal.size(); i++) {
      assertTrue(fromOriginal.get(i).same(fromRestored.get(i)));
    }
    assertEquals(List.of("deliver " + m1.id(), "resume " + m1.id() + " g0=[] g1=[11, 12] g2=[21]",
        "deliver " + s2.id()), app2.log);
    assertEquals(app.log, app2.log);
    assertArrayEquals(t.snapshot(s), t.snapshot(r));
  }

  @Test
  @ExpectedErrors("dropping channel batch from unknown group")
  void channelIgnoresGapsAndDuplicatesAndTrimsOnAcknowledgement() {
    SimDeliverer app = new SimDeliverer(null);
    GroupState s = t.group(G0, app);
    Start a = t.start(1, PLAIN, G1, G0, G1);
    Start b = t.start(2, PLAIN, G1, G0, G1);
    Start c = t.start(3, PLAIN, G1, G0, G1);
    assertEquals(0, ship(s, G1, 1, new Propose(b)), "a gap is skipped");
    assertEquals(0, s.pendingCount());
    assertEquals(2, ship(s, G1, 0, new Propose(a), new Propose(b)));
    assertEquals(3, ship(s, G1, 1, new Propose(b), new Propose(c)), "the duplicate of b is skipped");
    assertEquals(3, s.pendingCount());
    for (Start m : List.of(a, b, c)) {
      t.decide(s, m, 1);
    }
    assertEquals(List.of(a.id(), b.id(), c.id()), app.delivered());
    // g0 acknowledged each decision to g1 (lazy Decided items).
    assertArrayEquals(new long[] {0, 3, 3}, s.channelPositions(G1));
    for (long[] ackAndExpected : new long[][] {{2, 2}, {10, 2}, {1, 2}, {3, 3}}) {
      assertEquals(3, s.apply(new ChannelBatch(G1, 3, new Object[0], ackAndExpected[0])));
      assertEquals(ackAndExpected[1], s.channelPositions(G1)[0], "after ack " + ackAndExpected[0]);
    }
    assertEquals(List.of(), s.outboxRange(G1, 3, 10));
    // Trimmed items cannot be read: a sender must not label later items with their numbers.
    assertThrows(IllegalArgumentException.class, () -> s.outboxRange(G1, 0, 10));
    assertEquals(-1, s.apply(new ChannelBatch(GroupId.valueOf("g9"), 0, new Object[0], 0)), "an unknown sender");
    assertEquals(ALL.size() - 1, s.peers().size());
  }
}
