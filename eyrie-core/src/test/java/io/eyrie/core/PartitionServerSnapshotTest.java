package io.eyrie.core;

import static io.eyrie.multicast.testing.TestGroups.ORACLE;
import static io.eyrie.multicast.testing.TestGroups.P0;
import static io.eyrie.multicast.testing.TestGroups.P1;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.protocol.AccessReq;
import io.eyrie.core.protocol.CoreReply;
import io.eyrie.core.protocol.CreateReq;
import io.eyrie.core.protocol.MoveReq;
import io.eyrie.core.protocol.PartitionChange;
import io.eyrie.core.protocol.PartitionStatsReply;
import io.eyrie.core.protocol.SsmrReq;
import io.eyrie.core.protocol.StatsReq;
import io.eyrie.core.protocol.Verdict;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.testing.FakeExecutionContext;
import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A partition's snapshot: what it restores, and its layout byte for byte. */
@Timeout(10)
class PartitionServerSnapshotTest extends PartitionServerFixture {
  @Test
  void snapshotRestoresObjectsAndCounters() {
    PartitionServer s = server(P0, 10, 20);
    byte[] snap = s.snapshot();
    PartitionServer t = server(P0);
    t.restore(snap);
    assertEquals(List.of(id(1), id(2)), List.copyOf(t.localIds()));
    assertEquals(20L, ((Counter) t.object(id(2))).value);
    assertArrayEquals(snap, t.snapshot(), "the restored replica snapshots identically");
    t.restore(new byte[0]);
    assertTrue(t.localIds().isEmpty());
    TreeMap<ObjId, PRObject> none = new TreeMap<>();
    assertEquals(none.keySet(), t.localIds());
  }

  /**
   * A partition with every part of its replicated state in use: objects, counters, an S-SMR
   * access holding its objects, commands blocked behind it, a create waiting for its verdict
   * (its object made), a retired partition, and a partition change waiting for its table.
   */
  PartitionServer populated() {
    PartitionServer s = server(P0, 10, 20, 30);
    s.deliver(ctx(P0, new AccessReq(Command.access(new Add(1), id(1), id(7))), P0, P0)); // a retry
    s.deliver(ctx(P0, new AccessReq(Command.access(new Widen(7), id(1))), P0, P0)); // the application's retry
    PartitionServer p1 = server(P1);
    create(p1, P1, 4, 40);
    SsmrReq both = new SsmrReq(Command.access(new Add(1), id(3), id(4)));
    FakeExecutionContext c0 = ctx(P0, both, P0, P0, P1);
    FakeExecutionContext c1 = ctx(P1, both, P0, P0, P1);
    s.deliver(c0);
    p1.deliver(c1);
    c1.forwardTo(c0);
    assertEquals(71L, ((CoreReply) s.resume(c0).replyValue()).value(), "31 + 40");
    FakeExecutionContext retire = ctx(P0, new PartitionChange(P1, false), ORACLE, ORACLE, P0, P1);
    s.deliver(retire);
    TreeMap<GroupId, PartitionTable.State> states = new TreeMap<>();
    states.put(P0, PartitionTable.State.ACTIVE);
    states.put(P1, PartitionTable.State.RETIRED);
    retire.receive(ORACLE, new PartitionTable(states, new TreeMap<>()));
    s.resume(retire);
    s.deliver(ctx(P0, new PartitionChange(P1, true), ORACLE, ORACLE, P0, P1)); // waits for its table
    s.deliver(ctx(P0, new SsmrReq(Command.access(new Add(1), id(1), id(9))), P0, P0, P1)); // holds 1 and 9
    s.deliver(ctx(P0, new CreateReq(Command.create(id(6), 60L), P0), P0, ORACLE, P0)); // holds 6, made
    assertTrue(s.deliver(ctx(P0, new AccessReq(Command.access(new Add(5), id(2), id(1))), P0, P0)).isBlocked());
    assertTrue(s.deliver(ctx(P0, new MoveReq(new ObjId[] {id(3)}, P0, P1), P1, ORACLE, P0, P1)).isBlocked());
    return s;
  }

  /**
   * The snapshot of {@link #populated()} as this version writes it (its message ids are those
   * of one run). A replica must read the snapshots its predecessors wrote: changing how a
   * partition encodes its state changes these bytes and fails this test.
   */
  static final String POPULATED_SNAPSHOT = "0501020366010200146601040028660106003e03020c120170b10102c201000166010c0078"
      + "0202c8010002020402ca01000106";

  @Test
  void aPopulatedSnapshotIsReadAndWrittenByteForByte() {
    byte[] written = java.util.HexFormat.of().parseHex(POPULATED_SNAPSHOT);
    PartitionServer s = server(P0);
    s.restore(written);
    assertArrayEquals(written, s.snapshot(), "read and written again alike");
    assertEquals(List.of(id(1), id(2), id(3)), List.copyOf(s.localIds()));
    assertEquals(31L, ((Counter) s.object(id(3))).value);
    PartitionStatsReply stats = (PartitionStatsReply) s.query(new StatsReq(false));
    assertEquals(List.of(3L, 5L, 1L, 2L), List.of(stats.objects(), stats.executed(), stats.multiPartition(),
        stats.retries()), "objects, executed, multi-partition, retries");
    for (long held : new long[] {1, 9, 6}) {
      assertEquals(CoreReply.Status.BUSY, read(s, new Sum(), held).status(), "object " + held + " is held");
    }
    for (long claimed : new long[] {2, 3}) {
      assertEquals(CoreReply.Status.BUSY, read(s, new Sum(), claimed).status(), "object " + claimed + " is claimed by a blocked command");
    }
    assertTrue(s.deliver(ctx(P0, new MoveReq(new ObjId[] {id(5)}, P0, P1), P1, ORACLE, P0, P1)).isBlocked(),
        "a move out waits for the table of the change in progress");
    FakeExecutionContext made = ctx(P0, new CreateReq(Command.create(id(6), 60L), P0), P0, ORACLE, P0);
    made.receive(ORACLE, new Verdict(Verdict.Status.OK, P0));
    assertEquals(CoreReply.Status.OK, ((CoreReply) s.resume(made).replyValue()).status());
    assertEquals(60L, ((Counter) s.object(id(6))).value, "the object made before the snapshot is installed");
  }

  @Test
  void aPopulatedPartitionRestoresToTheSameState() {
    PartitionServer s = populated();
    PartitionServer t = server(P0);
    t.restore(s.snapshot());
    assertArrayEquals(s.snapshot(), t.snapshot());
    t.restore(new byte[0]);
    assertArrayEquals(server(P0).snapshot(), t.snapshot(), "an empty snapshot clears everything");
  }
}
