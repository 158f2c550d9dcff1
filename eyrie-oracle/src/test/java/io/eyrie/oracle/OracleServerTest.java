package io.eyrie.oracle;

import static io.eyrie.multicast.testing.TestGroups.ORACLE;
import static io.eyrie.multicast.testing.TestGroups.P0;
import static io.eyrie.multicast.testing.TestGroups.P1;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.protocol.Begun;
import io.eyrie.core.protocol.ConsultReq;
import io.eyrie.core.protocol.MoveReq;
import io.eyrie.core.protocol.Prophecy;
import io.eyrie.core.protocol.SsmrReq;
import io.eyrie.core.protocol.Verdict;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.testing.FakeExecutionContext;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The oracle's protocol (Algorithm 4) driven step by step through a fake execution context: no
 * cluster, no Ratis, deterministic. Creates, deletes, consults and moves; the partition table,
 * snapshots and failing hooks have their own classes.
 */
@Timeout(10)
class OracleServerTest extends OracleServerFixture {
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

  /** Places object 1 in p0 and delivers its move to p1; returns the move's context, not resumed yet. */
  FakeExecutionContext startMoveOfObject1ToP1(Recording o) {
    create(o, 1, P0);
    FakeExecutionContext m = ctx(new MoveReq(new ObjId[] {id(1)}, P0, P1), P1, ORACLE, P0, P1);
    o.deliver(m);
    return m;
  }

  @Test
  void aMoveItsDestinationAbandonedLeavesTheMapAndFreesTheChain() {
    Recording o = oracle();
    FakeExecutionContext m = startMoveOfObject1ToP1(o);
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
    FakeExecutionContext m = startMoveOfObject1ToP1(o);
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
}
