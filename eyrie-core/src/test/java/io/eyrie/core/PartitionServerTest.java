package io.eyrie.core;

import static io.eyrie.multicast.testing.TestGroups.ORACLE;
import static io.eyrie.multicast.testing.TestGroups.P0;
import static io.eyrie.multicast.testing.TestGroups.P1;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.internal.AccessSampler;
import io.eyrie.core.protocol.AccessReq;
import io.eyrie.core.protocol.Begun;
import io.eyrie.core.protocol.CoreReply;
import io.eyrie.core.protocol.CreateReq;
import io.eyrie.core.protocol.DeleteReq;
import io.eyrie.core.protocol.MoveReq;
import io.eyrie.core.protocol.Observed;
import io.eyrie.core.protocol.PartitionChange;
import io.eyrie.core.protocol.ReadReq;
import io.eyrie.core.protocol.SamplesReq;
import io.eyrie.core.protocol.SsmrReq;
import io.eyrie.core.protocol.Values;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.testing.FakeExecutionContext;
import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The partition server's protocol (Algorithms 1 and 3) driven step by step through a fake
 * execution context: no cluster, no Ratis, deterministic. Executing commands, retries, moves,
 * S-SMR commands, waiting commands and reads; creates, rollback and snapshots have their own
 * classes.
 */
@Timeout(10)
class PartitionServerTest extends PartitionServerFixture {
  @Test
  void accessExecutesLocallyAndRetriesWhenAnObjectIsElsewhere() {
    PartitionServer s = server(P0, 10);
    Execution e = s.deliver(ctx(P0, new AccessReq(Command.access(new Add(5), id(1))), P0, P0));
    assertEquals(15L, ((CoreReply) e.replyValue()).value());
    Execution miss = s.deliver(ctx(P0, new AccessReq(Command.access(new Add(5), id(1), id(2))), P0, P0));
    assertEquals(CoreReply.Status.RETRY, ((CoreReply) miss.replyValue()).status(), "object 2 is not here: the proxy must retry");
    assertEquals(15L, ((Counter) s.object(id(1))).value, "the retried command changed nothing");
  }

  @Test
  void multiObjectCommandsRunAloneAreSampledForThePlacementAndHandedOverOnce() {
    PartitionServer s = server(P0, 0, 0);
    for (int i = 0; i < 4 * AccessSampler.SAMPLE_EVERY; i++) {
      s.deliver(ctx(P0, new AccessReq(Command.access(new Add(1), id(1), id(2))), P0, P0));
      s.deliver(ctx(P0, new AccessReq(Command.access(new Add(1), id(1))), P0, P0)); // one object: no edge
    }
    Observed o = (Observed) s.query(new SamplesReq());
    assertEquals(4, o.accesses().size(), "one in " + AccessSampler.SAMPLE_EVERY + " of the two-object commands");
    assertArrayEquals(new long[] {1, 2}, o.accesses().get(0));
    assertEquals(AccessSampler.SAMPLE_EVERY, o.weight(), "each sample stands for that many commands");
    assertTrue(((Observed) s.query(new SamplesReq())).accesses().isEmpty(), "handed over once");
  }

  @Test
  void applicationRetryCarriesTheExtraObjects() {
    PartitionServer s = server(P0, 0);
    CoreReply r = (CoreReply) s.deliver(ctx(P0, new AccessReq(Command.access(new Widen(7), id(1))), P0, P0))
        .replyValue();
    assertEquals(CoreReply.Status.RETRY, r.status());
    assertArrayEquals(new ObjId[] {id(7)}, r.extra());
  }

  @Test
  void moveShipsTheValuesAndTheDestinationInstallsThem() {
    PartitionServer src = server(P0);
    PartitionServer dst = server(P1);
    create(src, P0, 1, 10);
    MoveReq m = new MoveReq(new ObjId[] {id(1)}, P0, P1);
    FakeExecutionContext atSrc = ctx(P0, m, P1, ORACLE, P0, P1);
    assertEquals(CoreReply.Status.OK, ((CoreReply) src.deliver(atSrc).replyValue()).status());
    assertFalse(src.localIds().contains(id(1)), "the source gave the object up");
    FakeExecutionContext atDst = ctx(P1, m, P1, ORACLE, P0, P1);
    assertEquals(java.util.Set.of(P0), dst.deliver(atDst).awaited(), "the destination waits for the values");
    atSrc.forwardTo(atDst);
    assertEquals(CoreReply.Status.OK, ((CoreReply) dst.resume(atDst).replyValue()).status());
    assertEquals(10L, ((Counter) dst.object(id(1))).value);
    assertEquals(List.of(new FakeExecutionContext.Sent(ORACLE, new Begun(P1))), atDst.sent(),
        "the destination tells the oracle it has the objects, so that its map follows");
  }

  /**
   * A partition learns from each partition change the table the oracle leaves; a move into a
   * retired partition does not ship (so a drained partition stays empty), and a move delivered
   * while the change waits for the oracle's table waits for it.
   */
  @Test
  void noMoveShipsIntoARetiredPartition() {
    PartitionServer src = server(P0, 10, 20);
    FakeExecutionContext change = ctx(P0, new PartitionChange(P1, false), ORACLE, ORACLE, P0, P1);
    assertEquals(java.util.Set.of(ORACLE), src.deliver(change).awaited(), "waits for the oracle's table");
    MoveReq m = new MoveReq(new ObjId[] {id(1)}, P0, P1);
    FakeExecutionContext blocked = ctx(P0, m, P1, ORACLE, P0, P1);
    assertTrue(src.deliver(blocked).isBlocked(), "a move out waits for the table");
    // It claims its object meanwhile: a delete of it delivered after it waits behind it (else
    // the delete would hold the object the move needs, while the oracle's chain puts the move first).
    FakeExecutionContext del = ctx(P0, new DeleteReq(Command.delete(id(1), null), P0), P0, ORACLE, P0);
    assertTrue(src.deliver(del).isBlocked(), "the delete keeps its place behind the move");
    TreeMap<GroupId, PartitionTable.State> states = new TreeMap<>();
    states.put(P0, PartitionTable.State.ACTIVE);
    states.put(P1, PartitionTable.State.RETIRED);
    change.receive(ORACLE, new PartitionTable(states, new TreeMap<>()));
    assertFalse(src.resume(change).isError());
    Execution e = src.deliver(blocked);
    assertTrue(e.isError() && e.errorMessage().contains("retired"), String.valueOf(e.errorMessage()));
    assertTrue(src.localIds().contains(id(1)), "the object stays");
    Values v = (Values) blocked.sent().get(0).item();
    assertTrue(v.error() != null && blocked.sent().get(0).to().equals(P1), "the destination is told, not left waiting");
    // The destination answers the client RETRY, not an error: the consult that chose it came
    // before the retirement, so the client asks the oracle again (the command does not fail).
    PartitionServer dst = server(P1);
    FakeExecutionContext atDst = ctx(P1, m, P1, ORACLE, P0, P1);
    assertEquals(java.util.Set.of(P0), dst.deliver(atDst).awaited());
    blocked.forwardTo(atDst);
    Execution answered = dst.resume(atDst);
    assertFalse(answered.isError(), String.valueOf(answered.errorMessage()));
    assertEquals(CoreReply.Status.RETRY, ((CoreReply) answered.replyValue()).status());
    assertTrue(dst.localIds().isEmpty(), "nothing arrived");
    Begun told = (Begun) atDst.sent().get(0).item();
    assertTrue(told.refusal() != null && told.refusal().contains("retired"), "the oracle's map stays: " + told);
    // A replica restored from a snapshot knows the table too.
    PartitionServer restored = server(P0);
    restored.restore(src.snapshot());
    FakeExecutionContext other = ctx(P0, new MoveReq(new ObjId[] {id(2)}, P0, P1), P1, ORACLE, P0, P1);
    Execution r = restored.deliver(other);
    assertTrue(r.isError() && r.errorMessage().contains("retired"), String.valueOf(r.errorMessage()));
  }

  /**
   * A partition change or a create that another destination abandoned (a reused message id)
   * ends cleanly here: moves out are no longer held back, and the create is refused, its object
   * dropped.
   */
  @Test
  void anAbandonedPartitionChangeOrCreateEndsCleanly() {
    PartitionServer s = server(P0, 10);
    FakeExecutionContext change = ctx(P0, new PartitionChange(P1, false), ORACLE, ORACLE, P0, P1);
    s.deliver(change);
    change.abandon(ORACLE);
    assertFalse(s.resume(change).isError());
    FakeExecutionContext move = ctx(P0, new MoveReq(new ObjId[] {id(1)}, P0, P1), P1, ORACLE, P0, P1);
    assertEquals(CoreReply.Status.OK, ((CoreReply) s.deliver(move).replyValue()).status(), "moves out are not held back");

    FakeExecutionContext c = ctx(P0, new CreateReq(Command.create(id(5), 3L), P0), P0, ORACLE, P0);
    s.deliver(c);
    c.abandon(ORACLE);
    CoreReply r = (CoreReply) s.resume(c).replyValue();
    assertEquals(CoreReply.Status.REFUSED, r.status(), String.valueOf(r.value()));
    assertNull(s.object(id(5)));
    create(s, P0, 5, 4);
    assertEquals(4, ((Counter) s.object(id(5))).value, "a later create of it is made afresh");
  }

  @Test
  void ssmrCommandSeesRemoteCopiesAndWritesOnlyItsOwnObjects() {
    SsmrPair p = ssmrOnCounters1And2(new Add(1));
    assertTrue(p.s0().deliver(p.c0()).isResumeLater(), "waits off the queue");
    assertTrue(p.s1().deliver(p.c1()).isResumeLater());
    p.exchange();
    assertEquals(31L, ((CoreReply) p.s0().resume(p.c0()).replyValue()).value(), "11 + 20");
    assertEquals(31L, ((CoreReply) p.s1().resume(p.c1()).replyValue()).value(), "both partitions compute the same reply");
    assertEquals(11L, ((Counter) p.s0().object(id(1))).value, "P0 owns the target: the write sticks");
    assertEquals(20L, ((Counter) p.s1().object(id(2))).value, "P1's object is untouched");
    assertNull(p.s1().object(id(1)), "the copy of a remote object is not kept");
  }

  /**
   * A command that waits for another group holds its objects: later commands on them are blocked
   * (without sending anything) until it finishes, in delivery order, while commands on other
   * objects run; what is held and what waits survives a snapshot (a new leader).
   */
  @Test
  void commandsOnTheObjectsOfAWaitingCommandWaitForItAndOthersRun() {
    PartitionServer s = server(P0, 10, 20);
    SsmrReq req = new SsmrReq(Command.access(new Add(1), id(1), id(9)));
    FakeExecutionContext z = ctx(P0, req, P0, P0, P1);
    assertEquals(java.util.Set.of(P1), s.deliver(z).awaited());
    FakeExecutionContext other = ctx(P0, new AccessReq(Command.access(new Add(5), id(2))), P0, P0);
    assertEquals(25L, ((CoreReply) s.deliver(other).replyValue()).value(), "object 2 is not held");
    FakeExecutionContext a = ctx(P0, new AccessReq(Command.access(new Add(100), id(1))), P0, P0);
    assertTrue(s.deliver(a).isBlocked(), "object 1 is held by the S-SMR access");
    assertEquals(List.of(), a.sent());
    FakeExecutionContext b = ctx(P0, new AccessReq(Command.access(new Add(1000), id(2), id(1))), P0, P0);
    assertTrue(s.deliver(b).isBlocked());
    FakeExecutionContext c = ctx(P0, new AccessReq(Command.access(new Add(1), id(2))), P0, P0);
    assertTrue(s.deliver(c).isBlocked(), "object 2 is claimed by b, delivered before c");
    FakeExecutionContext mv = ctx(P0, new MoveReq(new ObjId[] {id(9)}, P0, P1), P1, ORACLE, P0, P1);
    assertTrue(s.deliver(mv).isBlocked(), "a move of a held object, absent here, waits too");

    PartitionServer t = server(P0);
    t.restore(s.snapshot());
    for (PartitionServer x : List.of(s, t)) {
      assertTrue(x.deliver(b).isBlocked(), "b still waits");
      assertTrue(x.deliver(c).isBlocked(), "c still waits behind b");
    }
    TreeMap<ObjId, PRObject> nine = new TreeMap<>();
    nine.put(id(9), new Counter(id(9), 0));
    z.receive(P1, Values.of(nine));
    for (PartitionServer x : List.of(s, t)) {
      assertEquals(11L, ((CoreReply) x.resume(z).replyValue()).value(), "11 + 0");
      assertEquals(111L, ((CoreReply) x.deliver(a).replyValue()).value(), "a runs after the access");
      assertEquals(1136L, ((CoreReply) x.deliver(b).replyValue()).value(), "then b: 1111 + 25");
      assertEquals(26L, ((CoreReply) x.deliver(c).replyValue()).value(), "then c");
    }
  }

  /**
   * A read off the log is served only where delivering the command now would execute it at once:
   * never while a command in progress holds one of its objects, or a blocked command waits for
   * one; then it answers BUSY (the client sends it through the log). It changes nothing
   * replicated, and a missing object or the application's call for more objects is a RETRY, as
   * through the log.
   */
  @Test
  void aReadIsServedOffTheLogOnlyWhenNoCommandHereHoldsOrAwaitsItsObjects() {
    PartitionServer s = server(P0, 10, 20, 30);
    byte[] before = s.snapshot();
    assertEquals(30L, read(s, new Sum(), 1, 2).value());
    assertArrayEquals(before, s.snapshot(), "a read changes nothing replicated, not even the counters");
    assertEquals(CoreReply.Status.RETRY, read(s, new Sum(), 1, 7).status(), "object 7 is not here");
    assertArrayEquals(new ObjId[] {id(7)}, read(s, new Widen(7), 1).extra(), "the application asks for more");
    assertEquals(false, read(s, new Peek(2), 1).value(), "a read sees only its declared objects, as through the log");

    FakeExecutionContext z = ctx(P0, new SsmrReq(Command.access(new Add(1), id(1), id(9))), P0, P0, P1);
    assertEquals(java.util.Set.of(P1), s.deliver(z).awaited());
    assertEquals(CoreReply.Status.BUSY, read(s, new Sum(), 1).status(), "object 1 is held by the waiting S-SMR access");
    assertEquals(CoreReply.Status.BUSY, read(s, new Sum(), 9).status(), "so is 9, absent here: busy, not a retry");
    assertEquals(20L, read(s, new Sum(), 2).value(), "object 2 is free");
    FakeExecutionContext b = ctx(P0, new AccessReq(Command.access(new Add(100), id(2), id(1))), P0, P0);
    assertTrue(s.deliver(b).isBlocked());
    assertEquals(CoreReply.Status.BUSY, read(s, new Sum(), 2).status(), "object 2 is claimed by the blocked b");
    assertEquals(30L, read(s, new Sum(), 3).value());

    TreeMap<ObjId, PRObject> nine = new TreeMap<>();
    nine.put(id(9), new Counter(id(9), 0));
    z.receive(P1, Values.of(nine));
    assertEquals(11L, ((CoreReply) s.resume(z).replyValue()).value());
    assertEquals(CoreReply.Status.BUSY, read(s, new Sum(), 1).status(), "no longer held, but b, delivered before, waits for 1");
    assertEquals(131L, ((CoreReply) s.deliver(b).replyValue()).value(), "b runs: 120 + 11");
    assertEquals(131L, read(s, new Sum(), 1, 2).value(), "the read sees the access and b");

    assertEquals(CoreReply.Status.BUSY, read(s, new Sum(true), 3).status(), "the application failed: the log reports it");
    assertEquals(CoreReply.Status.BUSY, ((CoreReply) s.query(new ReadReq(Command.delete(id(1), null)))).status(),
        "only an access is read");
  }

  /** An application sees only the objects its command declares, even those held here. */
  @Test
  void getObjectSeesOnlyTheCommandsObjects() {
    PartitionServer s = server(P0, 10, 20);
    assertEquals(Boolean.TRUE, ((CoreReply) s.deliver(ctx(P0, new AccessReq(
        Command.access(new Peek(2), id(1), id(2))), P0, P0)).replyValue()).value());
    assertEquals(Boolean.FALSE, ((CoreReply) s.deliver(ctx(P0, new AccessReq(
        Command.access(new Peek(2), id(1))), P0, P0)).replyValue()).value(), "object 2 is not declared");
  }

  /**
   * The application reaches objects only through {@code getObject}, which answers only the
   * command's declared objects (docs/design.md 6 relies on it); no hook lists the partition's
   * other objects (review N7: {@code localObjects()} did, so a command could observe moves and
   * creates of objects it did not declare, in an order no linearization explains).
   */
  @Test
  void theApplicationSeesNoObjectItsCommandDidNotDeclare() {
    java.util.TreeSet<String> reachable = new java.util.TreeSet<>();
    for (java.lang.reflect.Method m : StateMachine.class.getDeclaredMethods()) {
      int mod = m.getModifiers();
      if (java.lang.reflect.Modifier.isPublic(mod) || java.lang.reflect.Modifier.isProtected(mod)) {
        reachable.add(m.getName());
      }
    }
    assertEquals(new java.util.TreeSet<>(List.of("executeCommand", "createObject", "objectDeleted",
        "copyForPartitions", "copyForRollback", "checkObjectsAfterCommands", "getObject", "retry", "partition")),
        reachable,
        "what a StateMachine can call or override; a new way to reach objects must keep to the declared set");
  }

  @Test
  void aMalformedMessageIsAnErrorAtEveryDestination() {
    PartitionServer s = server(P0);
    Execution e = s.deliver(ctx(P0, new MoveReq(new ObjId[] {id(1)}, P0, P0), P0, ORACLE, P0));
    assertTrue(e.isError(), "a move from a partition to itself would drop the objects");
  }
}
