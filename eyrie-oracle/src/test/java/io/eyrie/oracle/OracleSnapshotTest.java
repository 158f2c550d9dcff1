package io.eyrie.oracle;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.eyrie.core.ObjId;
import io.eyrie.core.protocol.PartitionTableReq;
import io.eyrie.core.protocol.PlanMoves;
import io.eyrie.core.protocol.PlanReq;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.testing.TestGroups;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The oracle's snapshot format, pinned: a replica reads a snapshot an older replica wrote, and
 * writes the same bytes back. The bytes were written by the oracle before its split into
 * {@code LocationMap}, {@code PartitionTableState}, {@code VerdictChains} and the rest.
 */
@Timeout(10)
class OracleSnapshotTest {
  static final GroupId P0 = TestGroups.P0;
  static final GroupId P1 = TestGroups.P1;
  static final GroupId P2 = TestGroups.P2;

  /**
   * Objects 1 and 3 in p0, 2 in p1 and 4 in p2; p2 added and p0 retired since the cluster file;
   * waiting for their partitions: a create of 5, two deletes of 2 and a move of 3 from p0 to p2;
   * the application's state is the string "created 1, 2, 3, 4".
   */
  static final String POPULATED = "04010000000000000070b0020000000000000070b1030000000000000070b004000000000000"
      + "0070b2030200000000000000020101000000000000000800000000000000000101000000000000000900000000000000000300"
      + "000000000000010101000000000000000a000000000000000005000000000000000101010000000000000007000000000000"
      + "000013036372656174656420312c20322c20332c20b40370b00070b10170b201";

  final Codec codec = OracleServerFixture.eyrieCodec();

  /** An oracle whose application state is one string. */
  static final class Noting extends OracleStateMachine {
    String note = "";

    @Override
    protected Object extraState() {
      return note;
    }

    @Override
    protected void restoreExtraState(Object state) {
      note = state == null ? "" : (String) state;
    }
  }

  Noting oracle() {
    Noting o = new Noting();
    o.init(TestGroups.ORACLE, OracleServerFixture.CLUSTER, codec);
    return o;
  }

  @Test
  void aSnapshotWrittenBeforeTheSplitIsReadAndWrittenBackByteForByte() {
    byte[] before = HexFormat.of().parseHex(POPULATED);
    Noting o = oracle();
    o.restore(before);
    assertEquals(P0, o.locationOf(ObjId.valueOf(1)));
    assertEquals(P1, o.locationOf(ObjId.valueOf(2)));
    assertEquals(P0, o.locationOf(ObjId.valueOf(3)));
    assertEquals(P2, o.locationOf(ObjId.valueOf(4)));
    assertNull(o.locationOf(ObjId.valueOf(5)), "a create still waiting is not in the map");
    assertEquals(Map.of(P0, 2L, P1, 1L, P2, 1L), o.load());
    assertEquals(List.of(P1, P2), o.partitions());
    io.eyrie.core.PartitionTable t = (io.eyrie.core.PartitionTable) o.query(new PartitionTableReq());
    assertEquals(List.of(P0), t.retired());
    assertEquals(2, t.objectsAt(P0));
    assertEquals("created 1, 2, 3, 4", o.note);
    // The chains came back too: object 3's move is still waiting, so draining p0 moves only 1.
    PlanMoves m = (PlanMoves) o.query(new PlanReq(100));
    assertEquals(Map.of(ObjId.valueOf(1), P0), m.from());
    assertArrayEquals(before, o.snapshot(), "the same bytes back");
  }
}
