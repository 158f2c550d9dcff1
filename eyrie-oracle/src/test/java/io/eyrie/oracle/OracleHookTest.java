package io.eyrie.oracle;

import static io.eyrie.multicast.testing.TestGroups.ORACLE;
import static io.eyrie.multicast.testing.TestGroups.P0;
import static io.eyrie.multicast.testing.TestGroups.P1;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.protocol.Begun;
import io.eyrie.core.protocol.SsmrReq;
import io.eyrie.core.protocol.Verdict;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.testing.FakeExecutionContext;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An application's hooks that throw, and partitions that abandon a create: the command is
 * refused, and the object's chain of commands goes on.
 */
@Timeout(10)
class OracleHookTest extends OracleServerFixture {
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
    assertEquals(Verdict.Status.OK, create(o, 2, P1).status());
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
