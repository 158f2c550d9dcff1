package io.eyrie.it;

import static io.eyrie.it.DssmrSim.ORACLE;
import static io.eyrie.it.DssmrSim.p;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.PartitionTable;
import io.eyrie.core.protocol.CoreReply;
import io.eyrie.core.protocol.CreateReq;
import io.eyrie.core.protocol.MoveReq;
import io.eyrie.core.protocol.PartitionChange;
import io.eyrie.core.protocol.PartitionTableReq;
import io.eyrie.it.DssmrSim.Msg;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What DRAINED means (review N5): a retired partition that the oracle's map calls empty has
 * nothing left in transit (the map follows a move only once its destination has the objects), and
 * no move can bring objects into it afterwards (every partition learns the retire at the same
 * point of the order and no source ships into a retired partition), so it stays empty.
 */
@Timeout(30)
class DrainedTest {
  static final ObjId A = ObjId.valueOf(1);

  static PartitionTable table(DssmrSim sim) {
    return (PartitionTable) sim.groups.get(ORACLE).app().query(new PartitionTableReq());
  }

  static DssmrSim withAInP0() {
    DssmrSim sim = new DssmrSim(3);
    Msg c = sim.submitAll(sim.msg(new CreateReq(Command.create(A, 5L), p(0)), p(0), ORACLE, p(0)));
    sim.settle();
    assertEquals(CoreReply.Status.OK, sim.replies.get(c.id()).status());
    return sim;
  }

  static void retire(DssmrSim sim, int i) {
    Msg r = sim.submitAll(sim.msg(new PartitionChange(p(i), false), ORACLE, ORACLE, p(0), p(1), p(2)));
    sim.settle();
    assertTrue(sim.others.get(r.id()) instanceof PartitionTable, "retired: " + sim.errors.get(r.id()));
  }

  @Test
  void aPartitionIsDrainedOnlyOnceItsObjectsHaveArrived() {
    DssmrSim sim = withAInP0();
    retire(sim, 0);
    assertFalse(table(sim).drained(p(0)));
    sim.hold(p(0), p(1)); // the values are in transit
    Msg m = sim.submitAll(sim.msg(new MoveReq(new ObjId[] {A}, p(0), p(1)), p(1), ORACLE, p(0), p(1)));
    sim.settle();
    assertTrue(sim.held(p(0)).isEmpty(), "p0 shipped the object");
    assertFalse(table(sim).drained(p(0)), "but it is in transit: stopping p0 now would lose it");
    sim.release(p(0), p(1));
    sim.settle();
    assertEquals(CoreReply.Status.OK, sim.replies.get(m.id()).status());
    assertTrue(table(sim).drained(p(0)), table(sim).toString());
    assertEquals(p(1), sim.map().get(A));
  }

  @Test
  void noMoveRefillsADrainedPartition() {
    DssmrSim sim = withAInP0();
    Msg out = sim.submitAll(sim.msg(new MoveReq(new ObjId[] {A}, p(0), p(1)), p(1), ORACLE, p(0), p(1)));
    sim.settle();
    assertEquals(CoreReply.Status.OK, sim.replies.get(out.id()).status());
    retire(sim, 0);
    assertTrue(table(sim).drained(p(0)));
    // A client gathered into p0 on a consult answered before the retire.
    Msg back = sim.submitAll(sim.msg(new MoveReq(new ObjId[] {A}, p(1), p(0)), p(0), ORACLE, p(0), p(1)));
    sim.settle();
    // Its location was stale: the destination answers RETRY (the client asks the oracle again),
    // not an error that would fail the command.
    assertEquals(CoreReply.Status.RETRY, sim.replies.get(back.id()).status(), String.valueOf(sim.errors.get(back.id())));
    assertTrue(table(sim).drained(p(0)), "still drained: " + table(sim));
    assertEquals(java.util.List.of(A.value()), sim.held(p(1)), "the object stayed where it was");
    assertEquals(p(1), sim.map().get(A), "and the map says so");
    sim.groups.forEach((g, s) -> assertEquals(0, s.queuedCount(), g + " is not parked"));
    // Made active again, it takes objects again.
    Msg on = sim.submitAll(sim.msg(new PartitionChange(p(0), true), ORACLE, ORACLE, p(0), p(1), p(2)));
    sim.settle();
    assertTrue(sim.others.containsKey(on.id()), String.valueOf(sim.errors.get(on.id())));
    Msg again = sim.submitAll(sim.msg(new MoveReq(new ObjId[] {A}, p(1), p(0)), p(0), ORACLE, p(0), p(1)));
    sim.settle();
    assertEquals(CoreReply.Status.OK, sim.replies.get(again.id()).status(), String.valueOf(sim.errors.get(again.id())));
    assertEquals(p(0), sim.map().get(A));
  }

  @Test
  void aPartitionChangeThatMissesAPartitionIsRefusedAndChangesNothing() {
    DssmrSim sim = withAInP0();
    Msg r = sim.submitAll(sim.msg(new PartitionChange(p(0), false), ORACLE, ORACLE, p(0), p(1)));
    sim.settle();
    assertTrue(sim.errors.containsKey(r.id()) && sim.errors.get(r.id()).contains("missed [p2]"),
        String.valueOf(sim.errors.get(r.id())));
    assertEquals(java.util.List.of(p(0), p(1), p(2)), table(sim).active());
    sim.groups.forEach((g, s) -> assertEquals(0, s.queuedCount(), g + " is not parked"));
    Msg m = sim.submitAll(sim.msg(new MoveReq(new ObjId[] {A}, p(0), p(1)), p(1), ORACLE, p(0), p(1)));
    sim.settle();
    assertEquals(CoreReply.Status.OK, sim.replies.get(m.id()).status(), "moves go on: " + sim.errors.get(m.id()));
  }
}
