package io.eyrie.oracle;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Command;
import io.eyrie.core.Eyrie;
import io.eyrie.core.ObjId;
import io.eyrie.core.protocol.Msgs;
import io.eyrie.core.protocol.Msgs.Prophecy;
import io.eyrie.core.protocol.Msgs.Verdict;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.testing.FakeExecutionContext;
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
  static final GroupId ORACLE = GroupId.valueOf("oracle");
  static final GroupId P0 = GroupId.valueOf("p0");
  static final GroupId P1 = GroupId.valueOf("p1");
  static final ClusterConfig CLUSTER = ClusterConfig.parse("""
      node 1 127.0.0.1 raft=1 client=2
      group oracle oracle 1
      group p0 partition 1
      group p1 partition 1
      """);

  final Codec codec = new Codec(Eyrie.registry());

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

  /** Runs a create through the oracle: parks until the partition's Begun, then places and answers. */
  Verdict create(Recording o, long id, GroupId at) {
    FakeExecutionContext c = ctx(new Msgs.CreateReq(Command.create(id(id), 0L), at), at, ORACLE, at);
    GroupId before = o.locationOf(id(id));
    Execution e = o.deliver(c);
    assertEquals(Set.of(at), e.awaited(), "the oracle decides only after the partition has begun");
    assertEquals(before, o.locationOf(id(id)), "nothing changes in the map before that");
    c.receive(at, new Msgs.Begun(at));
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
      Prophecy p = (Prophecy) o.query(new Msgs.ConsultReq(Command.create(id(i), 0L)));
      targets.merge(p.target(), 1, Integer::sum);
    }
    assertEquals(java.util.Map.of(P0, 4, P1, 4), targets,
        "eight creates consulted before any is applied go to both partitions, not all to the emptiest");
    // Once applied, a create counts through the map, not twice.
    for (long i = 1; i <= 3; i++) {
      create(o, 100 + i, P0);
    }
    Prophecy next = (Prophecy) o.query(new Msgs.ConsultReq(Command.create(id(9), 0L)));
    assertEquals(P0, next.target(), "p0: 3 objects + 1 create still expected; p1: 4 expected; the tie goes to"
        + " the first (counting the applied creates twice would say p0: 7)");
  }

  @Test
  void createPlacesTheObjectAndASecondCreateIsRefused() {
    Recording o = oracle();
    Prophecy p = (Prophecy) o.query(new Msgs.ConsultReq(Command.create(id(1), 0L)));
    assertEquals(Msgs.RETRY, p.status());
    assertEquals(P0, p.target(), "the emptiest partition (the first on a tie)");
    assertEquals(Msgs.OK, create(o, 1, P0).status());
    assertEquals(P0, o.locationOf(id(1)));
    assertEquals(Msgs.NOK, create(o, 1, P0).status());
    Prophecy again = (Prophecy) o.query(new Msgs.ConsultReq(Command.create(id(1), 0L)));
    assertEquals(Msgs.NOK, again.status());
    assertEquals(id(1), again.subject(), "the consult names the object that exists");
    assertEquals(List.of("created " + id(1) + " at p0"), o.events);
  }

  @Test
  void consultNamesTheMissingObject() {
    Recording o = oracle();
    create(o, 1, P0);
    Prophecy p = (Prophecy) o.query(new Msgs.ConsultReq(Command.access("x", id(1), id(2))));
    assertEquals(Msgs.NOK, p.status());
    assertEquals(id(2), p.subject());
  }

  @Test
  void deleteIsDecidedAfterThePartitionBegunAndRetriedWhenElsewhere() {
    Recording o = oracle();
    create(o, 1, P0);
    FakeExecutionContext wrong = ctx(new Msgs.DeleteReq(Command.delete(id(1), null), P1), P1, ORACLE, P1);
    o.deliver(wrong);
    wrong.receive(P1, new Msgs.Begun(P1));
    o.resume(wrong);
    assertEquals(Msgs.RETRY, ((Verdict) wrong.sent().get(0).item()).status(), "the object is in p0, not p1");
    assertEquals(P0, o.locationOf(id(1)));

    FakeExecutionContext d = ctx(new Msgs.DeleteReq(Command.delete(id(1), null), P0), P0, ORACLE, P0);
    o.deliver(d);
    d.receive(P0, new Msgs.Begun(P0));
    o.resume(d);
    assertEquals(Msgs.OK, ((Verdict) d.sent().get(0).item()).status());
    assertNull(o.locationOf(id(1)));
    assertTrue(o.events.contains("deleted " + id(1)), o.events.toString());
  }

  @Test
  void moveFollowsOnlyFromTheKnownSource() {
    Recording o = oracle();
    create(o, 1, P0);
    o.deliver(ctx(new Msgs.MoveReq(new ObjId[] {id(1)}, P1, P0), P0, ORACLE, P0, P1));
    assertEquals(P0, o.locationOf(id(1)), "a move from where the object is not is ignored here");
    assertTrue(o.deliver(ctx(new Msgs.MoveReq(new ObjId[] {id(1)}, P0, P1), P1, ORACLE, P0, P1)).isAwait() == false);
    assertEquals(P1, o.locationOf(id(1)));
  }

  @Test
  void ssmrCreateWaitsForEveryPartitionAndTellsEachTheVerdict() {
    Recording o = oracle();
    FakeExecutionContext c = ctx(new Msgs.SsmrReq(Command.create(id(5), 0L)), P0, ORACLE, P0, P1);
    assertEquals(Set.of(P0, P1), o.deliver(c).awaited());
    c.receive(P0, new Msgs.Begun(P0)).receive(P1, new Msgs.Begun(P1));
    o.resume(c);
    assertEquals(2, c.sent().size());
    Verdict v = (Verdict) c.sent().get(0).item();
    assertEquals(Msgs.OK, v.status());
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
}
