package io.eyrie.oracle;

import static io.eyrie.multicast.testing.TestGroups.ORACLE;
import static io.eyrie.multicast.testing.TestGroups.P0;
import static io.eyrie.multicast.testing.TestGroups.P1;
import static io.eyrie.multicast.testing.TestGroups.P2;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Service;
import io.eyrie.core.protocol.Begun;
import io.eyrie.core.protocol.ConsultReq;
import io.eyrie.core.protocol.CreateReq;
import io.eyrie.core.protocol.DeleteReq;
import io.eyrie.core.protocol.MoveReq;
import io.eyrie.core.protocol.PartitionChange;
import io.eyrie.core.protocol.PartitionTableReq;
import io.eyrie.core.protocol.PlanMoves;
import io.eyrie.core.protocol.PlanReq;
import io.eyrie.core.protocol.Prophecy;
import io.eyrie.core.protocol.SsmrReq;
import io.eyrie.core.protocol.Verdict;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.testing.FakeExecutionContext;
import io.eyrie.multicast.testing.TestGroups;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The oracle's protocol (Algorithm 4) driven step by step through a fake execution context: no
 * cluster, no Ratis, deterministic.
 */
@Timeout(10)
class OracleServerTest {
  static final ClusterConfig CLUSTER = TestGroups.oneNode(2);

  final Codec codec = eyrieCodec();

  /**
   * Returns the codec of a service with no types of its own: Eyrie's messages only, which is all
   * the oracle sends and stores here. The service's partition server never runs.
   */
  static Codec eyrieCodec() {
    return new Codec(Service.newBuilder().server(() -> null).oracle(OracleStateMachine::new).build().registry());
  }

  /** An oracle whose hooks record what they were told. */
  static final class Recording extends OracleStateMachine {
    final List<String> events = new java.util.ArrayList<>();

    @Override
    protected void created(Command create, GroupId at) {
      events.add("created " + create.target() + " at " + at);
    }

    @Override
    protected void deleted(ObjId id) {
      events.add("deleted " + id);
    }

    @Override
    protected Object extraState() {
      return new java.util.ArrayList<>(events);
    }

    @Override
    @SuppressWarnings("unchecked")
    protected void restoreExtraState(Object state) {
      events.clear();
      if (state != null) {
        events.addAll((List<String>) state);
      }
    }
  }

  Recording oracle() {
    Recording o = new Recording();
    o.init(ORACLE, CLUSTER, codec);
    return o;
  }

  FakeExecutionContext ctx(Object payload, GroupId reply, GroupId... dests) {
    return new FakeExecutionContext(codec, ORACLE, payload, reply, dests);
  }

  static ObjId id(long v) {
    return ObjId.valueOf(v);
  }

  /** A DS-SMR create of object {@code id} (value 0) on the ordered path: sent to the oracle and {@code at}. */
  FakeExecutionContext createAt(long id, GroupId at) {
    return ctx(new CreateReq(Command.create(id(id), 0L), at), at, ORACLE, at);
  }

  /** A DS-SMR delete of object {@code id} on the ordered path: sent to the oracle and {@code at}. */
  FakeExecutionContext deleteAt(long id, GroupId at) {
    return ctx(new DeleteReq(Command.delete(id(id), null), at), at, ORACLE, at);
  }

  /** Runs a create through the oracle: parks until the partition's Begun, then places and answers. */
  Verdict create(Recording o, long id, GroupId at) {
    FakeExecutionContext c = createAt(id, at);
    GroupId before = o.locationOf(id(id));
    Execution e = o.deliver(c);
    assertEquals(Set.of(at), e.awaited(), "the oracle decides only after the partition has begun");
    assertEquals(before, o.locationOf(id(id)), "nothing changes in the map before that");
    c.receive(at, new Begun(at));
    assertTrue(o.resume(c).replyValue() == null);
    assertEquals(1, c.sent().size());
    assertEquals(at, c.sent().get(0).to());
    return (Verdict) c.sent().get(0).item();
  }

  @Test
  void concurrentCreatesAreSpreadAlthoughNoneIsAppliedYet() {
    Recording o = oracle();
    java.util.Map<GroupId, Integer> targets = new java.util.TreeMap<>();
    for (long i = 1; i <= 8; i++) {
      Prophecy p = (Prophecy) o.query(new ConsultReq(Command.create(id(i), 0L)));
      targets.merge(p.target(), 1, Integer::sum);
    }
    assertEquals(java.util.Map.of(P0, 4, P1, 4), targets,
        "eight creates consulted before any is applied go to both partitions, not all to the emptiest");
    // Once applied, a create counts through the map, not twice.
    for (long i = 1; i <= 3; i++) {
      create(o, 100 + i, P0);
    }
    Prophecy next = (Prophecy) o.query(new ConsultReq(Command.create(id(9), 0L)));
    assertEquals(P0, next.target(), "p0: 3 objects + 1 create still expected; p1: 4 expected; the tie goes to"
        + " the first (counting the applied creates twice would say p0: 7)");
  }

  @Test
  void createPlacesTheObjectAndASecondCreateIsRefused() {
    Recording o = oracle();
    Prophecy p = (Prophecy) o.query(new ConsultReq(Command.create(id(1), 0L)));
    assertEquals(Prophecy.Status.RETRY, p.status());
    assertEquals(P0, p.target(), "the emptiest partition (the first on a tie)");
    assertEquals(Verdict.Status.OK, create(o, 1, P0).status());
    assertEquals(P0, o.locationOf(id(1)));
    assertEquals(Verdict.Status.NOK, create(o, 1, P0).status());
    Prophecy again = (Prophecy) o.query(new ConsultReq(Command.create(id(1), 0L)));
    assertEquals(Prophecy.Status.NOK, again.status());
    assertEquals(id(1), again.subject(), "the consult names the object that exists");
    assertEquals(List.of("created " + id(1) + " at p0"), o.events);
  }

  @Test
  void consultNamesTheMissingObject() {
    Recording o = oracle();
    create(o, 1, P0);
    Prophecy p = (Prophecy) o.query(new ConsultReq(Command.access("x", id(1), id(2))));
    assertEquals(Prophecy.Status.NOK, p.status());
    assertEquals(id(2), p.subject());
  }

  @Test
  void deleteIsDecidedAfterThePartitionBegunAndRetriedWhenElsewhere() {
    Recording o = oracle();
    create(o, 1, P0);
    FakeExecutionContext wrong = deleteAt(1, P1);
    o.deliver(wrong);
    wrong.receive(P1, new Begun(P1));
    o.resume(wrong);
    assertEquals(Verdict.Status.RETRY, ((Verdict) wrong.sent().get(0).item()).status(), "the object is in p0, not p1");
    assertEquals(P0, o.locationOf(id(1)));

    FakeExecutionContext d = deleteAt(1, P0);
    o.deliver(d);
    d.receive(P0, new Begun(P0));
    o.resume(d);
    assertEquals(Verdict.Status.OK, ((Verdict) d.sent().get(0).item()).status());
    assertNull(o.locationOf(id(1)));
    assertTrue(o.events.contains("deleted " + id(1)), o.events.toString());
  }

  /**
   * Runs a move through the oracle: it waits for the source's Begun, then follows the move, or
   * (a refusal: the values did not leave) leaves the map.
   */
  void move(Recording o, ObjId id, GroupId src, GroupId dst, String refusal) {
    FakeExecutionContext c = ctx(new MoveReq(new ObjId[] {id}, src, dst), dst, ORACLE, src, dst)
        .partitions(P0, P1, P2);
    GroupId before = o.locationOf(id);
    assertEquals(Set.of(dst), o.deliver(c).awaited(), "a move waits for its destination to have the objects");
    assertEquals(before, o.locationOf(id), "and the map with it");
    c.receive(dst, refusal == null ? new Begun(dst) : Begun.refused(dst, refusal));
    assertFalse(o.resume(c).isResumeLater());
  }

  @Test
  void moveFollowsOnlyFromTheKnownSource() {
    Recording o = oracle();
    create(o, 1, P0);
    move(o, id(1), P1, P0, null);
    assertEquals(P0, o.locationOf(id(1)), "a move from where the object is not is ignored here");
    move(o, id(1), P0, P1, null);
    assertEquals(P1, o.locationOf(id(1)));
  }

  @Test
  void aMoveWhoseValuesDidNotReachTheDestinationLeavesTheMap() {
    Recording o = oracle();
    create(o, 1, P0);
    move(o, id(1), P0, P1, "the objects [1] cannot be encoded");
    assertEquals(P0, o.locationOf(id(1)), "the object is still at its source, and the map says so");
    assertEquals(Long.valueOf(1), o.load().get(P0));
  }

  @Test
  void aMoveItsDestinationAbandonedLeavesTheMapAndFreesTheChain() {
    Recording o = oracle();
    create(o, 1, P0);
    FakeExecutionContext m = ctx(new MoveReq(new ObjId[] {id(1)}, P0, P1), P1, ORACLE, P0, P1);
    o.deliver(m);
    m.abandon(P1);
    assertFalse(o.resume(m).isResumeLater());
    assertEquals(P0, o.locationOf(id(1)), "the destination did not take the object");
    assertEquals(Verdict.Status.OK, create(o, 2, P0).status());
    FakeExecutionContext d = deleteAt(1, P0);
    o.deliver(d);
    d.receive(P0, new Begun(P0));
    o.resume(d);
    assertEquals(Verdict.Status.OK, ((Verdict) d.sent().get(0).item()).status(), "the object's chain goes on");
  }

  @Test
  void aCommandOnAnObjectInTransitWaitsForTheMoveAndSeesWhereItEnded() {
    Recording o = oracle();
    create(o, 1, P0);
    FakeExecutionContext m = ctx(new MoveReq(new ObjId[] {id(1)}, P0, P1), P1, ORACLE, P0, P1);
    o.deliver(m);
    // A delete the client sent to p0 (where the consult said the object was) is delivered next.
    FakeExecutionContext d = deleteAt(1, P0);
    o.deliver(d);
    d.receive(P0, new Begun(P0));
    assertTrue(o.resume(d).isResumeLater(), "the delete waits behind the move of its object");
    assertTrue(d.sent().isEmpty());
    m.receive(P1, Begun.refused(P1, "not shipped"));
    o.resume(m);
    o.resume(d);
    assertEquals(Verdict.Status.OK, ((Verdict) d.sent().get(0).item()).status(),
        "the move failed, so the object is still at p0, where the delete finds it");
    assertNull(o.locationOf(id(1)));
  }

  @Test
  void aCreateThePartitionCouldNotMakeIsRefusedAndNeverPlaced() {
    Recording o = oracle();
    FakeExecutionContext c = createAt(1, P0);
    o.deliver(c);
    c.receive(P0, Begun.refused(P0, "createObject failed at p0: boom"));
    o.resume(c);
    Verdict v = (Verdict) c.sent().get(0).item();
    assertEquals(Verdict.Status.REFUSED, v.status());
    assertTrue(v.reason().contains("boom"), v.reason());
    assertNull(o.locationOf(id(1)), "the map never names it");
    assertTrue(o.events.isEmpty(), "nor does the application hear of it: " + o.events);
    assertEquals(Verdict.Status.OK, create(o, 1, P0).status(), "a later create of the object is decided afresh");

    FakeExecutionContext s = ctx(new SsmrReq(Command.create(id(2), 0L)), P0, ORACLE, P0, P1);
    o.deliver(s);
    s.receive(P0, Begun.refused(P0, "boom")).receive(P1, Begun.refused(P1, "boom"));
    o.resume(s);
    assertEquals(Verdict.Status.REFUSED, ((Verdict) s.sent().get(0).item()).status(), "an S-SMR create too");
    assertNull(o.locationOf(id(2)));
  }

  @Test
  void ssmrCreateWaitsForEveryPartitionAndTellsEachTheVerdict() {
    Recording o = oracle();
    FakeExecutionContext c = ctx(new SsmrReq(Command.create(id(5), 0L)), P0, ORACLE, P0, P1);
    assertEquals(Set.of(P0, P1), o.deliver(c).awaited());
    c.receive(P0, new Begun(P0)).receive(P1, new Begun(P1));
    o.resume(c);
    assertEquals(2, c.sent().size());
    Verdict v = (Verdict) c.sent().get(0).item();
    assertEquals(Verdict.Status.OK, v.status());
    assertEquals(v, c.sent().get(1).item(), "both partitions get the same verdict");
    assertEquals(v.location(), o.locationOf(id(5)));
  }

  @Test
  void snapshotCarriesTheMapAndTheApplicationsState() {
    Recording o = oracle();
    create(o, 1, P0);
    create(o, 2, P1);
    byte[] snap = o.snapshot();
    Recording r = oracle();
    r.restore(snap);
    assertEquals(P1, r.locationOf(id(2)));
    assertEquals(o.events, r.events);
    assertEquals(Long.valueOf(1), r.load().get(P0));
    assertArrayEquals(snap, r.snapshot());
  }

  /**
   * Applies a partition change as the log would: a message to the oracle and every partition,
   * each of which gets the table it leaves.
   */
  Execution change(Recording o, GroupId p, boolean active) {
    FakeExecutionContext c = ctx(new PartitionChange(p, active), ORACLE, ORACLE, P0, P1, P2).partitions(P0, P1, P2);
    Execution e = o.deliver(c);
    assertEquals(List.of(P0, P1, P2), c.sent().stream().map(FakeExecutionContext.Sent::to).toList(),
        "every partition learns the table, refused or not");
    io.eyrie.core.PartitionTable t = (io.eyrie.core.PartitionTable) c.sent().get(0).item();
    assertEquals(t, o.query(new PartitionTableReq()), "the table the change leaves");
    return e;
  }

  @Test
  void anAddedPartitionTakesNewObjectsAndARetiredOneNone() {
    Recording o = oracle();
    create(o, 1, P0);
    create(o, 2, P1);
    assertEquals(List.of(P0, P1), o.partitions());
    Execution e = change(o, P2, true);
    io.eyrie.core.PartitionTable t = (io.eyrie.core.PartitionTable) e.replyValue();
    assertEquals(List.of(P0, P1, P2), t.active());
    assertEquals(List.of(P0, P1, P2), o.partitions());
    Prophecy p = (Prophecy) o.query(new ConsultReq(Command.create(id(3), 0L)));
    assertEquals(P2, p.target(), "the empty added partition takes the next object");

    t = (io.eyrie.core.PartitionTable) change(o, P0, false).replyValue();
    assertEquals(List.of(P0), t.retired());
    assertEquals(1, t.objectsAt(P0));
    assertTrue(!t.drained(P0));
    // A create whose consult chose p0 before it was retired is sent back to consult again.
    assertEquals(Verdict.Status.RETRY, create(o, 4, P0).status());
    assertNull(o.locationOf(id(4)));
    // The default placement never picks a retired partition, though it has the fewest objects.
    change(o, P1, true);
    for (long i = 10; i < 14; i++) {
      Prophecy q = (Prophecy) o.query(new ConsultReq(Command.create(id(i), 0L)));
      assertTrue(!q.target().equals(P0), "placed in a retired partition: " + q);
    }
    // A command whose objects the application would gather in p0 is gathered elsewhere.
    Prophecy g = (Prophecy) o.query(new ConsultReq(Command.access("x", id(1), id(2))));
    assertTrue(g.target() == null || !g.target().equals(P0), "gathered in a retired partition: " + g);
  }

  @Test
  void theLastActivePartitionCannotBeRetiredNorAnUnknownOneAdded() {
    Recording o = oracle();
    assertTrue(!change(o, P0, false).isError());
    Execution e = change(o, P1, false);
    assertTrue(e.isError() && e.errorMessage().contains("last active"), e.errorMessage());
    assertEquals(List.of(P1), o.partitions());
    Execution unknown = o.deliver(ctx(new PartitionChange(GroupId.valueOf("p9"), true), ORACLE, ORACLE,
        GroupId.valueOf("p9")).partitions(P0, P1, P2));
    assertTrue(unknown.isError() && unknown.errorMessage().contains("p9"), unknown.errorMessage());
    FakeExecutionContext missing = ctx(new PartitionChange(P2, true), ORACLE, ORACLE, P1, P2).partitions(P0, P1, P2);
    Execution sent = o.deliver(missing);
    assertTrue(sent.isError() && sent.errorMessage().contains("missed [p0]"),
        "a partition change goes to every partition of the table: " + sent.errorMessage());
    assertEquals(2, missing.sent().size(), "the partitions it reached still learn the (unchanged) table");
    assertEquals(List.of(P1), o.partitions());
  }

  @Test
  void aPlanDrainsRetiredPartitionsInEveryPlacementMode() {
    Recording o = oracle(); // the paper's rule: no learned plan
    for (long i = 1; i <= 6; i++) {
      create(o, i, i % 2 == 0 ? P0 : P1);
    }
    change(o, P2, true);
    change(o, P0, false);
    PlanMoves m = (PlanMoves) o.query(new PlanReq(2));
    assertEquals(2, m.from().size(), "at most max objects per round");
    m = (PlanMoves) o.query(new PlanReq(100));
    assertEquals(java.util.Set.of(id(2), id(4), id(6)), m.from().keySet(), "every object of p0, and only those");
    m.from().values().forEach(g -> assertEquals(P0, g));
    // Spread to the active partition with the fewest objects, counting the moves chosen: p2 first.
    assertEquals(List.of(P2, P2, P2), List.copyOf(m.to().values()));
    for (java.util.Map.Entry<ObjId, GroupId> e : m.from().entrySet()) {
      move(o, e.getKey(), e.getValue(), m.to().get(e.getKey()), null);
    }
    io.eyrie.core.PartitionTable t = (io.eyrie.core.PartitionTable) o.query(new PartitionTableReq());
    assertTrue(t.drained(P0), t.toString());
    assertEquals(3, t.objectsAt(P2));
    assertTrue(((PlanMoves) o.query(new PlanReq(100))).from().isEmpty());
  }

  @Test
  void anSsmrCreateThatMissesAPartitionIsRetriedNotPlaced() {
    Recording o = oracle();
    create(o, 1, P0);
    create(o, 2, P1);
    change(o, P2, true);
    // A client that has not learned p2 sends the S-SMR create to p0 and p1; the oracle would place it in p2.
    FakeExecutionContext c = ctx(new SsmrReq(Command.create(id(3), 0L)), P0, ORACLE, P0, P1)
        .partitions(P0, P1, P2);
    o.deliver(c);
    c.receive(P0, new Begun(P0)).receive(P1, new Begun(P1));
    o.resume(c);
    assertEquals(2, c.sent().size());
    c.sent().forEach(s -> assertEquals(Verdict.Status.RETRY, ((Verdict) s.item()).status()));
    assertNull(o.locationOf(id(3)), "not placed where no destination creates it");
  }

  /**
   * Review N1's schedule on one oracle replica: creates in p0 and p1, an S-SMR create to the
   * oracle and both (placed by the least loaded active partition), p2 added, then retires down to
   * the last active partition. Returns what each step decided.
   */
  List<Object> reviewSchedule(Recording o) {
    List<Object> out = new java.util.ArrayList<>();
    out.add(create(o, 1, P0).status());
    out.add(create(o, 2, P1).status());
    out.add(create(o, 3, P0).status());
    FakeExecutionContext c = ctx(new SsmrReq(Command.create(id(4), 0L)), P0, ORACLE, P0, P1)
        .partitions(P0, P1);
    o.deliver(c);
    c.receive(P0, new Begun(P0)).receive(P1, new Begun(P1));
    o.resume(c);
    out.add(c.sent().get(0).item());
    for (Object[] step : new Object[][] {{P2, true}, {P0, false}, {P1, false}, {P2, false}}) {
      Execution e = change(o, (GroupId) step[0], (Boolean) step[1]);
      out.add(e.isError() ? "error: " + e.errorMessage() : e.replyValue().toString());
    }
    return out;
  }

  @Test
  void aReplicaRestoredFromAnEmptySnapshotReplaysAsAFreshOneDoes() {
    Recording fresh = oracle();
    // A replica that had gone further (p2 added and holding an object) and is reset to the
    // initial state: the cluster file's table, whatever it saw before.
    Recording reset = oracle();
    create(reset, 50, P0);
    change(reset, P2, true);
    create(reset, 51, P2);
    change(reset, P0, false);
    reset.restore(new byte[0]);
    assertEquals(List.of(P0, P1), reset.partitions());
    assertEquals(fresh.query(new PartitionTableReq()), reset.query(new PartitionTableReq()));
    List<Object> a = reviewSchedule(fresh);
    List<Object> b = reviewSchedule(reset);
    assertEquals(a, b, "the same decisions");
    assertEquals(Verdict.Status.OK, ((Verdict) a.get(3)).status(), "the S-SMR create is placed in p0 or p1: " + a);
    assertTrue(((String) a.get(7)).contains("last active"), a.toString());
    assertArrayEquals(fresh.snapshot(), reset.snapshot(), "the same state");
    assertEquals(fresh.load(), reset.load());
  }

  @Test
  void snapshotCarriesThePartitionTable() {
    Recording o = oracle();
    create(o, 1, P0);
    change(o, P2, true);
    change(o, P0, false);
    byte[] snap = o.snapshot();
    Recording r = oracle();
    r.restore(snap);
    assertEquals(List.of(P1, P2), r.partitions());
    assertEquals(o.query(new PartitionTableReq()), r.query(new PartitionTableReq()));
    assertArrayEquals(snap, r.snapshot());
    r.restore(new byte[0]);
    assertEquals(List.of(P0, P1), r.partitions(), "an empty snapshot is the cluster file's table");
  }

  /** An oracle whose hooks throw for the objects named (an application bug on those objects). */
  static final class Failing extends OracleStateMachine {
    final Set<ObjId> failCreated = new java.util.TreeSet<>();
    final Set<ObjId> failDeleted = new java.util.TreeSet<>();
    final Set<ObjId> failPlacement = new java.util.TreeSet<>();

    @Override
    protected void created(Command create, GroupId at) {
      if (failCreated.contains(create.target())) {
        throw new IllegalStateException("created failed on " + create.target());
      }
    }

    @Override
    protected void deleted(ObjId id) {
      if (failDeleted.contains(id)) {
        throw new AssertionError("deleted failed on " + id);
      }
    }

    @Override
    protected GroupId getObjectPlacement(Command create) {
      if (failPlacement.contains(create.target())) {
        throw new IllegalArgumentException("placement failed on " + create.target());
      }
      return super.getObjectPlacement(create);
    }
  }

  Failing failing() {
    Failing o = new Failing();
    o.init(ORACLE, CLUSTER, codec);
    return o;
  }

  /** Resumes a message whose partitions have all begun: it must finish (no error) and send each the same verdict. */
  static Verdict decided(OracleStateMachine o, FakeExecutionContext c, GroupId... partitions) {
    for (GroupId g : partitions) {
      c.receive(g, new Begun(g));
    }
    Execution e = o.resume(c);
    assertTrue(!e.isError() && !e.isAwait() && !e.isResumeLater(), "decided, not " + e);
    assertEquals(partitions.length, c.sent().size(), "a verdict to every partition");
    for (int i = 0; i < partitions.length; i++) {
      assertEquals(partitions[i], c.sent().get(i).to());
      assertEquals(c.sent().get(0).item(), c.sent().get(i).item());
    }
    return (Verdict) c.sent().get(0).item();
  }

  @Test
  void aCreateWhoseCreatedHookThrowsIsRefusedUnplacedAndTheObjectsNextCreateIsDecided() {
    Failing o = failing();
    o.failCreated.add(id(1));
    FakeExecutionContext first = createAt(1, P0);
    FakeExecutionContext second = createAt(1, P0);
    o.deliver(first);
    o.deliver(second); // queued behind the first on the same object
    Verdict v = decided(o, first, P0);
    assertEquals(Verdict.Status.REFUSED, v.status());
    assertNull(o.locationOf(id(1)), "the place done before the hook threw is undone");
    assertEquals(Long.valueOf(0), o.load().get(P0));
    o.failCreated.clear();
    assertEquals(Verdict.Status.OK, decided(o, second, P0).status(), "the object's chain went on");
    assertEquals(P0, o.locationOf(id(1)));
    assertEquals(Long.valueOf(1), o.load().get(P0));
  }

  /**
   * Review N4: a partition that ended a create without executing it (its message id was reused
   * with other content) sends no Begun and tells the oracle so: the create is refused (the
   * other partitions get a REFUSED verdict, the map is unchanged) instead of holding the object's
   * chain for ever, and the next create of the object is decided.
   */
  @Test
  void aCreateAPartitionAbandonedIsRefusedAndTheObjectsChainGoesOn() {
    Recording o = oracle();
    FakeExecutionContext first = createAt(7, P0);
    FakeExecutionContext second = createAt(7, P1);
    o.deliver(first);
    o.deliver(second); // queued behind the first on the same object
    Execution e = o.resume(first.abandon(P0));
    assertTrue(!e.isAwait() && !e.isResumeLater(), "ended, not " + e);
    assertEquals(List.of(), first.sent(), "nothing for the partition that abandoned it");
    assertNull(o.locationOf(id(7)), "nothing placed");
    assertEquals(Verdict.Status.OK, decided(o, second, P1).status(), "the object's chain went on");
    assertEquals(P1, o.locationOf(id(7)));
    // An S-SMR create that one of its partitions abandoned: the other one is refused.
    FakeExecutionContext ssmr = ctx(new SsmrReq(Command.create(id(8), 0L)), P0, ORACLE, P0, P1);
    o.deliver(ssmr);
    ssmr.receive(P1, new Begun(P1));
    o.resume(ssmr.abandon(P0));
    assertEquals(1, ssmr.sent().size(), "a verdict to p1 only: " + ssmr.sent());
    assertEquals(P1, ssmr.sent().get(0).to());
    assertEquals(Verdict.Status.REFUSED, ((Verdict) ssmr.sent().get(0).item()).status());
    assertNull(o.locationOf(id(8)));
  }

  @Test
  void aDeleteWhoseDeletedHookThrowsIsRefusedAndTheObjectStays() {
    Failing o = failing();
    FakeExecutionContext c = createAt(2, P1);
    o.deliver(c);
    assertEquals(Verdict.Status.OK, decided(o, c, P1).status());
    o.failDeleted.add(id(2));
    FakeExecutionContext first = deleteAt(2, P1);
    FakeExecutionContext second = deleteAt(2, P1);
    o.deliver(first);
    o.deliver(second);
    assertEquals(Verdict.Status.REFUSED, decided(o, first, P1).status(), "an Error from the hook, too, is a refusal");
    assertEquals(P1, o.locationOf(id(2)), "the removal done before the hook threw is undone");
    assertEquals(Long.valueOf(1), o.load().get(P1));
    o.failDeleted.clear();
    assertEquals(Verdict.Status.OK, decided(o, second, P1).status());
    assertNull(o.locationOf(id(2)));
    assertEquals(Long.valueOf(0), o.load().get(P1));
  }

  @Test
  void anSsmrCreateWhosePlacementThrowsIsRefusedAtEveryPartition() {
    Failing o = failing();
    o.failPlacement.add(id(3));
    FakeExecutionContext ssmr = ctx(new SsmrReq(Command.create(id(3), 0L)), P0, ORACLE, P0, P1);
    FakeExecutionContext ssmrDelete = ctx(new SsmrReq(Command.delete(id(3), null)), P0, ORACLE, P0, P1);
    o.deliver(ssmr);
    o.deliver(ssmrDelete);
    assertEquals(new Verdict(Verdict.Status.REFUSED, null, "the oracle's application failed: java.lang.IllegalArgumentException: placement failed on " + id(3)),
        decided(o, ssmr, P0, P1), "refused, with the application's exception");
    assertNull(o.locationOf(id(3)));
    assertEquals(Verdict.Status.NOK, decided(o, ssmrDelete, P0, P1).status(), "the next command on it is decided: nothing to delete");
    o.failPlacement.clear();
    FakeExecutionContext again = ctx(new SsmrReq(Command.create(id(3), 0L)), P0, ORACLE, P0, P1);
    o.deliver(again);
    Verdict ok = decided(o, again, P0, P1);
    assertEquals(Verdict.Status.OK, ok.status());
    assertEquals(ok.location(), o.locationOf(id(3)));
    byte[] snap = o.snapshot();
    Failing r = failing();
    r.restore(snap);
    assertArrayEquals(snap, r.snapshot(), "no chain left behind");
  }
}
