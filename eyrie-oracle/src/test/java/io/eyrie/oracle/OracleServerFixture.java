package io.eyrie.oracle;

import static io.eyrie.multicast.testing.TestGroups.ORACLE;
import static io.eyrie.multicast.testing.TestGroups.P0;
import static io.eyrie.multicast.testing.TestGroups.P1;
import static io.eyrie.multicast.testing.TestGroups.P2;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Service;
import io.eyrie.core.protocol.Begun;
import io.eyrie.core.protocol.CreateReq;
import io.eyrie.core.protocol.DeleteReq;
import io.eyrie.core.protocol.MoveReq;
import io.eyrie.core.protocol.PartitionChange;
import io.eyrie.core.protocol.PartitionTableReq;
import io.eyrie.core.protocol.Verdict;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.testing.FakeExecutionContext;
import io.eyrie.multicast.testing.TestGroups;
import java.util.List;
import java.util.Set;

/**
 * What the oracle's deterministic tests share: an oracle whose hooks record what they were told,
 * on a one-node cluster with partitions p0 and p1, the codec of Eyrie's own messages, and
 * creating, moving and changing partitions the way the partitions' messages do. No cluster, no
 * Ratis.
 */
abstract class OracleServerFixture {
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

  /** An oracle that placed object 1 in p0 and object 2 in p1. */
  Recording oracleWithOnePerPartition() {
    Recording o = oracle();
    create(o, 1, P0);
    create(o, 2, P1);
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
  Verdict create(OracleStateMachine o, long id, GroupId at) {
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
}
