package io.eyrie.oracle;

import static io.eyrie.multicast.testing.TestGroups.ORACLE;
import static io.eyrie.multicast.testing.TestGroups.P0;
import static io.eyrie.multicast.testing.TestGroups.P1;
import static io.eyrie.multicast.testing.TestGroups.P2;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Command;
import io.eyrie.core.protocol.Begun;
import io.eyrie.core.protocol.PartitionTableReq;
import io.eyrie.core.protocol.SsmrReq;
import io.eyrie.core.protocol.Verdict;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.testing.FakeExecutionContext;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The oracle's snapshot: the location map, the partition table and the application's own state. */
@Timeout(10)
class OracleServerSnapshotTest extends OracleServerFixture {
  @Test
  void snapshotCarriesTheMapAndTheApplicationsState() {
    Recording o = oracleWithOnePerPartition();
    byte[] snap = o.snapshot();
    Recording r = oracle();
    r.restore(snap);
    assertEquals(P1, r.locationOf(id(2)));
    assertEquals(o.events, r.events);
    assertEquals(Long.valueOf(1), r.load().get(P0));
    assertArrayEquals(snap, r.snapshot());
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
}
