package io.eyrie.it;

import static io.eyrie.it.DssmrSim.ORACLE;
import static io.eyrie.it.DssmrSim.p;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.protocol.AccessReq;
import io.eyrie.core.protocol.CoreReply;
import io.eyrie.core.protocol.CreateReq;
import io.eyrie.core.protocol.DeleteReq;
import io.eyrie.core.protocol.MoveReq;
import io.eyrie.core.protocol.Prophecy;
import io.eyrie.core.protocol.ReadReq;
import io.eyrie.core.protocol.SsmrReq;
import io.eyrie.examples.bank.BankOps;
import io.eyrie.multicast.GroupId;
import io.eyrie.it.DssmrSim.Msg;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Execution atomicity (docs/design.md): no destination finishes a multi-group command, and for
 * the oracle that includes changing the map that consults read and sending a verdict, before
 * every destination has started it. Each test replays a schedule from the protocol review on
 * the deterministic cluster of {@link DssmrSim} and checks that the outcomes the clients see
 * have a linearization. The first three fail on a build whose oracle decides a create or delete
 * as soon as it delivers it.
 */
@Timeout(30)
class ExecutionAtomicityTest {
  private static final ObjId V = ObjId.valueOf(1);
  private static final ObjId W = ObjId.valueOf(2);

  /** Creates an account through the ordered path with every channel flowing. */
  private static void create(DssmrSim sim, ObjId id, long balance, GroupId at) {
    Msg m = sim.submitAll(sim.msg(new CreateReq(Command.create(id, balance), at), at, ORACLE, at));
    sim.settle();
    assertEquals(CoreReply.Status.OK, sim.replies.get(m.id()).status(), "create " + id);
  }

  /** Raises the oracle's Skeen clock well above the partitions' clocks, as its traffic does. */
  private static void busyOracle(DssmrSim sim, GroupId elsewhere) {
    for (int i = 0; i < 10; i++) {
      create(sim, ObjId.valueOf(1_000 + i), 0, elsewhere);
    }
  }

  /** Submits delete(id) on the ordered path (at's partition and the oracle) without settling. */
  private static Msg submitDelete(DssmrSim sim, ObjId id, GroupId at) {
    return sim.submitAll(sim.msg(new DeleteReq(Command.delete(id, null), at), at, ORACLE, at));
  }

  /**
   * The F1 schedule's start: v (balance 5) lives in P1 and the oracle's clock runs ahead; delete(v)
   * is submitted, the oracle->P1 channel held and P1's leader failed over, then everything else
   * settles. Returns the delete, which cannot complete until the channel is released.
   */
  private static Msg deleteWhileTheOracleCannotReachP1(DssmrSim sim) {
    create(sim, V, 5, p(0));
    busyOracle(sim, p(1));
    Msg del = submitDelete(sim, V, p(0));
    sim.hold(ORACLE, p(0));
    sim.failOver(p(0));
    sim.settle();
    return del;
  }

  /**
   * Ships P1's proposal to the oracle and the oracle's verdict back to P1, then holds P1's
   * channel to the oracle: the signal that P1 started the command stays undelivered.
   */
  private static void holdP1sStartedSignal(DssmrSim sim) {
    sim.ship(p(0), ORACLE);
    sim.ship(ORACLE, p(0));
    sim.hold(p(0), ORACLE);
  }

  private static Msg read(DssmrSim sim, ObjId id, GroupId at) {
    return sim.submitAll(sim.msg(new AccessReq(Command.access(new BankOps.Read(), id)), at, at));
  }

  private static boolean readReturned(DssmrSim sim, Msg read, long balance) {
    CoreReply r = sim.replies.get(read.id());
    return r != null && r.status() == CoreReply.Status.OK && Arrays.equals((long[]) r.value(), new long[] {balance});
  }

  /**
   * The review's F1 schedule, consult variant: the oracle->P1 channel is held (P1's leader was
   * killed and the oracle's sender still tries the old one) while P1's new leader resends its
   * proposal, so the oracle decides delete(v) first. Client X consults for v; client Y, invoked
   * after X completed, reads v at P1 from its cache. If X learnt that v is gone, Y must not read
   * v's old value.
   */
  @Test
  void aConsultDoesNotSeeADeleteThatThePartitionHasNotStarted() {
    DssmrSim sim = new DssmrSim(2);
    Msg del = deleteWhileTheOracleCannotReachP1(sim);

    Prophecy x = sim.consult(Command.access(new BankOps.Read(), V));
    Msg y = read(sim, V, p(0));
    sim.release(ORACLE, p(0));
    sim.settle();

    boolean xSawAbsent = x.status() == Prophecy.Status.NOK;
    boolean ySawOld = readReturned(sim, y, 5);
    assertFalse(xSawAbsent && ySawOld, "X saw v deleted, then Y (invoked after X) read v's old value");
    assertEquals(Prophecy.Status.RETRY, x.status(), "the consult still names v's partition");
    assertEquals(p(0), x.locations().get(V));
    assertEquals(CoreReply.Status.OK, sim.replies.get(del.id()).status(), "the delete completes once the channel is back");
    assertNull(sim.map().get(V));
    assertFalse(sim.held(p(0)).contains(V.value()));
  }

  /**
   * The F1 schedule, ordered-path variant: while P1 has not started delete(v), client X creates v
   * in P2 (its consult saw v absent before). X must not complete before P1 has executed the
   * delete, or a later read at P1 returns the old value while v also lives in P2.
   */
  @Test
  void aCreateOrderedAfterADeleteWaitsUntilThePartitionStartedTheDelete() {
    DssmrSim sim = new DssmrSim(2);
    Msg del = deleteWhileTheOracleCannotReachP1(sim);

    Msg x = sim.submitAll(sim.msg(new CreateReq(Command.create(V, 77L), p(1)), p(1), ORACLE, p(1)));
    sim.settle();
    boolean xDoneBeforeY = sim.replies.containsKey(x.id());
    Msg y = read(sim, V, p(0));
    sim.release(ORACLE, p(0));
    sim.settle();

    assertFalse(xDoneBeforeY && readReturned(sim, y, 5),
        "X re-created v after the delete and completed, then Y (invoked after X) read the old v");
    assertEquals(CoreReply.Status.OK, sim.replies.get(del.id()).status());
    assertEquals(CoreReply.Status.OK, sim.replies.get(x.id()).status());
    assertEquals(p(1), sim.map().get(V));
    assertFalse(sim.held(p(0)).contains(V.value()), "v lives in one partition only");
    assertTrue(sim.held(p(1)).contains(V.value()));
  }

  /**
   * The execution-atomicity review's CE1: a multi-partition S-SMR command z1 that bypasses the
   * oracle is pending at P1 ahead of delete(v) and not yet known at P2. If the oracle exposed
   * the delete before P1 started it, a consult (X) sees v gone, then a read of w at P2 (Y) is
   * ordered before z1, which still reads v: a cycle z1 < delete < X < Y < z1.
   */
  @Test
  void anSsmrCommandThatBypassesTheOracleIsNotOvertakenThroughAConsult() {
    DssmrSim sim = new DssmrSim(3);
    create(sim, V, 5, p(0));
    create(sim, W, 0, p(1));
    busyOracle(sim, p(2));
    Msg z1 = sim.msg(new SsmrReq(Command.access(new BankOps.Transfer(1, 2, 1), V, W)), p(0), p(0), p(1));
    sim.submit(z1, p(0));
    sim.hold(p(0), p(1));
    Msg z2 = submitDelete(sim, V, p(0));
    sim.settle();

    Prophecy x = sim.consult(Command.access(new BankOps.Read(), V));
    Msg y = read(sim, W, p(1));
    sim.settle();
    sim.submit(z1, p(1));
    sim.release(p(0), p(1));
    sim.settle();

    CoreReply r1 = sim.replies.get(z1.id());
    assertNotNull(r1, "z1 completes");
    boolean z1ReadV = r1.status() == CoreReply.Status.OK && "ok".equals(r1.value());
    assertFalse(x.status() == Prophecy.Status.NOK && readReturned(sim, y, 0) && z1ReadV,
        "X saw v deleted, Y then read w before z1, yet z1 read v: no linearization");
    assertEquals(CoreReply.Status.OK, sim.replies.get(z2.id()).status());
  }

  /**
   * CE2 of the review, as a guard: a rule that lets the oracle send its create verdict at its
   * head but change the map only later lets a completed create be followed by a consult that
   * says "absent". Here P1's started-signal is held: the create may not complete before the
   * oracle's map shows v.
   */
  @Test
  void aCreateCompletesOnlyAfterTheOracleMapShowsIt() {
    DssmrSim sim = new DssmrSim(2);
    Msg c = sim.submitAll(sim.msg(new CreateReq(Command.create(V, 3L), p(0)), p(0), ORACLE, p(0)));
    holdP1sStartedSignal(sim);
    sim.settle();
    boolean done = sim.replies.containsKey(c.id());
    Prophecy x = sim.consult(Command.access(new BankOps.Read(), V));
    assertFalse(done && x.status() == Prophecy.Status.NOK, "the create completed but a consult finds v absent");
    sim.release(p(0), ORACLE);
    sim.settle();
    assertEquals(CoreReply.Status.OK, sim.replies.get(c.id()).status());
    assertEquals(Prophecy.Status.RETRY, sim.consult(Command.access(new BankOps.Read(), V)).status());
  }

  /** CE2's delete half: a completed delete must not be followed by a consult that says "exists". */
  @Test
  void aDeleteCompletesOnlyAfterTheOracleMapDropsIt() {
    DssmrSim sim = new DssmrSim(2);
    create(sim, V, 5, p(0));
    Msg d = submitDelete(sim, V, p(0));
    holdP1sStartedSignal(sim);
    sim.settle();
    boolean done = sim.replies.containsKey(d.id());
    Prophecy x = sim.consult(Command.create(V, 1L));
    assertFalse(done && x.status() == Prophecy.Status.NOK, "the delete completed but a consult for create(v) says it exists");
    sim.release(p(0), ORACLE);
    sim.settle();
    assertEquals(CoreReply.Status.OK, sim.replies.get(d.id()).status());
    assertEquals(Prophecy.Status.RETRY, sim.consult(Command.create(V, 1L)).status(), "v may be created again");
  }

  /**
   * F4: an S-SMR command sent to the partitions a stale cache names, not to all of them, must
   * not answer a final "does not exist" for an object that lives in another partition.
   */
  @Test
  void ssmrToSomePartitionsRetriesInsteadOfDenyingAnObjectElsewhere() {
    DssmrSim sim = new DssmrSim(3);
    create(sim, V, 5, p(2));
    create(sim, W, 1, p(0));
    Msg m = sim.submitAll(sim.msg(new SsmrReq(Command.access(new BankOps.Read(), V, W)), p(0), p(0), p(1)));
    sim.settle();
    assertEquals(CoreReply.Status.RETRY, sim.replies.get(m.id()).status(), "v exists in p2");
    Msg all = sim.submitAll(sim.msg(new SsmrReq(Command.access(new BankOps.Read(), ObjId.valueOf(99), W)),
        p(0), ORACLE, p(0), p(1), p(2)));
    sim.settle();
    assertEquals(CoreReply.Status.NOT_FOUND, sim.replies.get(all.id()).status(), "the fallback, sent everywhere, may say so");
  }

  /** An S-SMR create and delete (the fallback) go through the same started/verdict exchange. */
  @Test
  void ssmrCreateAndDeleteCompleteAndKeepTheMapAndPartitionsInStep() {
    DssmrSim sim = new DssmrSim(2);
    Msg c = sim.submitAll(sim.msg(new SsmrReq(Command.create(V, 4L)), p(0), ORACLE, p(0), p(1)));
    sim.settle();
    assertEquals(CoreReply.Status.OK, sim.replies.get(c.id()).status());
    GroupId at = sim.map().get(V);
    assertTrue(sim.held(at).contains(V.value()));
    Msg again = sim.submitAll(sim.msg(new SsmrReq(Command.create(V, 4L)), p(0), ORACLE, p(0), p(1)));
    Msg d = sim.submitAll(sim.msg(new SsmrReq(Command.delete(V, null)), p(0), ORACLE, p(0), p(1)));
    Msg d2 = sim.submitAll(sim.msg(new SsmrReq(Command.delete(V, null)), p(0), ORACLE, p(0), p(1)));
    sim.settle();
    assertEquals(CoreReply.Status.EXISTS, sim.replies.get(again.id()).status(), "exists already");
    assertEquals(CoreReply.Status.OK, sim.replies.get(d.id()).status());
    assertEquals(CoreReply.Status.NOT_FOUND, sim.replies.get(d2.id()).status(), "gone already");
    assertNull(sim.map().get(V));
    assertEquals(List.of(), sim.held(at).stream().filter(id -> id == V.value()).toList());
  }

  /**
   * The oracle does not hold up its other work while a create waits for its partition's Begun:
   * a create of another object in another partition completes meanwhile.
   */
  @Test
  void theOracleGoesOnWithOtherObjectsWhileACreateWaits() {
    DssmrSim sim = new DssmrSim(2);
    Msg a = sim.submitAll(sim.msg(new CreateReq(Command.create(V, 1L), p(0)), p(0), ORACLE, p(0)));
    sim.ship(p(0), ORACLE); // p0's proposal only
    sim.ship(ORACLE, p(0)); // p0 delivers a, sends Begun (held below)
    sim.hold(p(0), ORACLE);
    Msg b = sim.submitAll(sim.msg(new CreateReq(Command.create(W, 2L), p(1)), p(1), ORACLE, p(1)));
    sim.settle();
    assertEquals(CoreReply.Status.OK, sim.replies.get(b.id()).status(), "b completes while a waits");
    assertNull(sim.replies.get(a.id()));
    assertNull(sim.map().get(V), "a is not visible yet");
    sim.failOver(ORACLE); // the waiting create survives a new oracle leader (snapshot and restore)
    sim.release(p(0), ORACLE);
    sim.settle();
    assertEquals(CoreReply.Status.OK, sim.replies.get(a.id()).status());
    assertEquals(p(0), sim.map().get(V));
    assertEquals(0, sim.groups.get(ORACLE).queuedCount());
  }

  /**
   * Commands on one object keep the oracle's delivery order: a move delivered while the object's
   * create waits is applied after the create, so the map ends where the object is.
   */
  @Test
  void aMoveOfAnObjectWhoseCreateWaitsIsAppliedAfterIt() {
    DssmrSim sim = new DssmrSim(2);
    Msg c = sim.submitAll(sim.msg(new CreateReq(Command.create(V, 4L), p(0)), p(0), ORACLE, p(0)));
    sim.ship(p(0), ORACLE);
    sim.ship(ORACLE, p(0));
    sim.hold(p(0), ORACLE);
    Msg m = sim.submitAll(sim.msg(new MoveReq(new ObjId[] {V}, p(0), p(1)), p(1), ORACLE, p(0), p(1)));
    Msg d = sim.submitAll(sim.msg(new DeleteReq(Command.delete(V, null), p(1)), p(1), ORACLE, p(1)));
    sim.settle();
    assertNull(sim.map().get(V), "nothing about v is visible while its create waits");
    sim.failOver(ORACLE);
    sim.release(p(0), ORACLE);
    sim.settle();
    assertEquals(CoreReply.Status.OK, sim.replies.get(c.id()).status());
    assertEquals(CoreReply.Status.OK, sim.replies.get(m.id()).status());
    assertEquals(CoreReply.Status.OK, sim.replies.get(d.id()).status(), "the delete found v where the move put it");
    assertNull(sim.map().get(V));
    assertFalse(sim.held(p(0)).contains(V.value()));
    assertFalse(sim.held(p(1)).contains(V.value()));
    sim.groups.forEach((g, s) -> assertEquals(0, s.queuedCount(), g + " has nothing left"));
  }

  // ------------------------------------------------------------- S-SMR accesses off the queue

  private static final ObjId X = ObjId.valueOf(3);

  /** An S-SMR transfer of 1 from v (p0) to w (p1), submitted at both, with p1's values held. */
  private static Msg transferWaitingAtP0(DssmrSim sim) {
    create(sim, V, 5, p(0));
    create(sim, X, 7, p(0));
    create(sim, W, 0, p(1));
    Msg z = sim.submitAll(sim.msg(new SsmrReq(Command.access(new BankOps.Transfer(1, 2, 1), V, W)),
        p(0), p(0), p(1)));
    sim.ship(p(1), p(0)); // p1's proposal: p0 delivers z and sends its values
    sim.hold(p(1), p(0)); // p1's values (sent once it has p0's proposal) are late
    sim.settle();
    assertNull(sim.replies.get(z.id()), "p0 waits for p1's values");
    return z;
  }

  /**
   * An S-SMR access that waits at p0 for p1's values lets p0 go on with commands on other objects
   * (a command on x completes meanwhile; before, p0's queue stopped behind the access), while
   * every command on its objects, whatever its kind, waits for it and then sees its write: each
   * object's commands run in delivery order.
   */
  @Test
  void anSsmrAccessWaitingForValuesHoldsUpOnlyCommandsOnItsObjects() {
    DssmrSim sim = new DssmrSim(2);
    Msg z = transferWaitingAtP0(sim);
    Msg rv = read(sim, V, p(0));
    Msg rx = read(sim, X, p(0));
    Msg dep = sim.submitAll(sim.msg(new AccessReq(Command.access(new BankOps.Deposit(10), V)), p(0), p(0)));
    Msg rx2 = read(sim, X, p(0));
    sim.settle();
    assertTrue(readReturned(sim, rx, 7), "a read of x, behind the waiting access, completes: "
        + sim.replies.get(rx.id()) + " " + sim.errors.get(rx.id()) + " " + sim.groups.get(p(0)).describe(rx.id()));
    assertTrue(readReturned(sim, rx2, 7), "so does one behind a blocked command on v");
    assertNull(sim.replies.get(rv.id()), "a read of v waits for the access that holds v");
    assertNull(sim.replies.get(dep.id()));
    Msg del = submitDelete(sim, V, p(0));
    Msg mv = sim.submitAll(sim.msg(new MoveReq(new ObjId[] {V}, p(0), p(1)), p(1), ORACLE, p(0), p(1)));
    sim.settle();
    assertEquals(p(0), sim.map().get(V), "the delete has not begun at p0, so the oracle still maps v");
    sim.release(p(1), p(0));
    sim.settle();
    assertEquals("ok", sim.replies.get(z.id()).value());
    assertTrue(readReturned(sim, rv, 4), "the read of v sees the transfer ordered before it");
    assertEquals(14L, sim.replies.get(dep.id()).value(), "then the deposit");
    assertEquals(CoreReply.Status.OK, sim.replies.get(del.id()).status(), "then the delete");
    assertEquals(CoreReply.Status.OK, sim.replies.get(mv.id()).status(), "the move after it moves nothing");
    assertNull(sim.map().get(V));
    assertFalse(sim.held(p(0)).contains(V.value()));
    assertFalse(sim.held(p(1)).contains(V.value()));
    Msg rw = read(sim, W, p(1));
    sim.settle();
    assertTrue(readReturned(sim, rw, 1));
    sim.groups.forEach((g, s) -> assertEquals(0, s.queuedCount(), g + " has nothing left"));
  }

  /**
   * Which objects a waiting S-SMR access holds is replicated state: a new leader of p0 (restored
   * from the snapshot) still makes a read of v wait for the access, and still lets one of x by.
   */
  @Test
  void aNewLeaderKeepsTheObjectsOfAWaitingSsmrAccessHeld() {
    DssmrSim sim = new DssmrSim(2);
    Msg z = transferWaitingAtP0(sim);
    Msg blocked = read(sim, V, p(0));
    sim.settle();
    sim.failOver(p(0));
    Msg rv = read(sim, V, p(0));
    Msg rx = read(sim, X, p(0));
    sim.settle();
    assertTrue(readReturned(sim, rx, 7));
    assertNull(sim.replies.get(blocked.id()));
    assertNull(sim.replies.get(rv.id()), "v is still held after the fail-over");
    sim.release(p(1), p(0));
    sim.settle();
    assertEquals("ok", sim.replies.get(z.id()).value());
    assertTrue(readReturned(sim, blocked, 4));
    assertTrue(readReturned(sim, rv, 4));
    sim.groups.forEach((g, s) -> assertEquals(0, s.queuedCount(), g + " has nothing left"));
  }

  /** A read as Client.sendRead asks a partition to serve it off the log (a linearizable read). */
  private static CoreReply readOffTheLog(DssmrSim sim, ObjId id, GroupId at) {
    return (CoreReply) sim.groups.get(at).app().query(new ReadReq(Command.access(new BankOps.Read(), id)));
  }

  /**
   * A read off the log never sees half of an S-SMR access: p1 has finished the transfer (w's new
   * balance is readable there), so p0, which still waits for p1's values, must not serve v's old
   * balance: it answers BUSY, and the read sent through the log then waits for the transfer. A
   * read of an object that no command in progress touches is served at once.
   */
  @Test
  void aReadOffTheLogNeverSeesHalfOfAnSsmrAccess() {
    DssmrSim sim = new DssmrSim(2);
    Msg z = transferWaitingAtP0(sim);
    assertArrayEquals(new long[] {1}, (long[]) readOffTheLog(sim, W, p(1)).value(), "p1 finished the transfer");
    assertEquals(CoreReply.Status.BUSY, readOffTheLog(sim, V, p(0)).status(), "v's old balance would undo half of it");
    assertArrayEquals(new long[] {7}, (long[]) readOffTheLog(sim, X, p(0)).value());
    Msg rv = read(sim, V, p(0));
    sim.settle();
    assertNull(sim.replies.get(rv.id()), "through the log the read waits for the transfer");
    sim.release(p(1), p(0));
    sim.settle();
    assertEquals("ok", sim.replies.get(z.id()).value());
    assertTrue(readReturned(sim, rv, 4));
    assertArrayEquals(new long[] {4}, (long[]) readOffTheLog(sim, V, p(0)).value());
  }

  /**
   * Two S-SMR accesses on one object run in delivery order at both partitions even when the
   * second one's values could be read earlier: the second waits at p0 until the first finished,
   * so it reads the first's write and both partitions compute the same replies.
   */
  @Test
  void conflictingSsmrAccessesRunInDeliveryOrder() {
    DssmrSim sim = new DssmrSim(2);
    Msg z = transferWaitingAtP0(sim);
    Msg z2 = sim.submitAll(sim.msg(new SsmrReq(Command.access(new BankOps.Read(), V, W)), p(1), p(0), p(1)));
    Msg z3 = sim.submitAll(sim.msg(new SsmrReq(Command.access(new BankOps.Read(), X, W)), p(0), p(0), p(1)));
    sim.settle();
    assertNull(sim.replies.get(z2.id()));
    sim.release(p(1), p(0));
    sim.settle();
    assertEquals("ok", sim.replies.get(z.id()).value());
    assertArrayEquals(new long[] {4, 1}, (long[]) sim.replies.get(z2.id()).value());
    assertArrayEquals(new long[] {1, 7}, (long[]) sim.replies.get(z3.id()).value(), "w, then x");
    sim.groups.forEach((g, s) -> assertEquals(0, s.queuedCount(), g + " has nothing left"));
  }

  // ------------------------------------------------------------- F5: malformed messages

  private static void assertRefusedAndIdle(DssmrSim sim, Msg m) {
    sim.settle();
    assertTrue(sim.errors.containsKey(m.id()), "an error reply for " + m.payload().length + "-byte message");
    sim.groups.forEach((g, s) -> assertEquals(0, s.queuedCount(), g + " is not parked"));
  }

  @Test
  void aMoveFromAPartitionToItselfIsRefusedAndLosesNothing() {
    DssmrSim sim = new DssmrSim(2);
    create(sim, V, 5, p(0));
    Msg m = sim.submitAll(sim.msg(new MoveReq(new ObjId[] {V}, p(0), p(0)), p(0), ORACLE, p(0)));
    assertRefusedAndIdle(sim, m);
    assertEquals(p(0), sim.map().get(V));
    Msg r = read(sim, V, p(0));
    sim.settle();
    assertTrue(readReturned(sim, r, 5), "v is still there");
  }

  @Test
  void aMoveWhoseSourceIsNotADestinationIsRefused() {
    DssmrSim sim = new DssmrSim(3);
    create(sim, V, 5, p(0));
    Msg m = sim.submitAll(sim.msg(new MoveReq(new ObjId[] {V}, p(0), p(2)), p(1), ORACLE, p(1), p(2)));
    assertRefusedAndIdle(sim, m);
    assertEquals(p(0), sim.map().get(V));
    Msg r = read(sim, V, p(0));
    sim.settle();
    assertTrue(readReturned(sim, r, 5));
  }

  @Test
  void aCreateOrDeleteNamingAPartitionThatIsNotADestinationIsRefused() {
    DssmrSim sim = new DssmrSim(2);
    create(sim, V, 5, p(0));
    Msg c = sim.submitAll(sim.msg(new CreateReq(Command.create(W, 1L), p(1)), p(0), ORACLE, p(0)));
    assertRefusedAndIdle(sim, c);
    assertNull(sim.map().get(W));
    Msg d = sim.submitAll(sim.msg(new DeleteReq(Command.delete(V, null), p(1)), p(0), ORACLE, p(0)));
    assertRefusedAndIdle(sim, d);
    assertEquals(p(0), sim.map().get(V));
    assertTrue(sim.held(p(0)).contains(V.value()));
  }

  @Test
  void anAccessToSeveralGroupsIsRefused() {
    DssmrSim sim = new DssmrSim(2);
    create(sim, V, 5, p(0));
    Msg m = sim.submitAll(sim.msg(new AccessReq(Command.access(new BankOps.Read(), V)), p(0), p(0), p(1)));
    assertRefusedAndIdle(sim, m);
    assertArrayEquals(new Object[] {p(0)}, new Object[] {sim.map().get(V)});
  }
}
