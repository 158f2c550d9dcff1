package io.eyrie.oracle;

import static io.eyrie.multicast.testing.TestGroups.ORACLE;
import static io.eyrie.multicast.testing.TestGroups.P0;
import static io.eyrie.multicast.testing.TestGroups.P1;
import static io.eyrie.multicast.testing.TestGroups.P2;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.protocol.Begun;
import io.eyrie.core.protocol.ConsultReq;
import io.eyrie.core.protocol.PartitionChange;
import io.eyrie.core.protocol.PartitionTableReq;
import io.eyrie.core.protocol.PlanMoves;
import io.eyrie.core.protocol.PlanReq;
import io.eyrie.core.protocol.Prophecy;
import io.eyrie.core.protocol.SsmrReq;
import io.eyrie.core.protocol.Verdict;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.testing.FakeExecutionContext;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The oracle's partition table: partitions added and retired, and the plans that drain them. */
@Timeout(10)
class OraclePartitionTableTest extends OracleServerFixture {
  @Test
  void anAddedPartitionTakesNewObjectsAndARetiredOneNone() {
    Recording o = oracleWithOnePerPartition();
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
    Recording o = oracleWithOnePerPartition();
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
}
