package io.eyrie.core;

import static io.eyrie.multicast.testing.TestGroups.ORACLE;
import static io.eyrie.multicast.testing.TestGroups.P0;
import static io.eyrie.multicast.testing.TestGroups.P1;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.protocol.AccessReq;
import io.eyrie.core.protocol.CoreReply;
import io.eyrie.core.protocol.MoveReq;
import io.eyrie.multicast.testing.FakeExecutionContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A command that fails changes nothing: the partitions put back what it wrote. */
@Timeout(10)
class PartitionRollbackTest extends PartitionServerFixture {
  /**
   * A command that writes and then fails changes nothing: it throws, it asks for more objects,
   * or it leaves an object that can no longer be encoded. Its error or RETRY reply is then true.
   */
  @Test
  void aCommandThatFailsAfterWritingChangesNothing() {
    PartitionServer s = server(P0, 10, 20);
    for (String fail : new String[] {"throw", "retry", "spoil"}) {
      FakeExecutionContext c = ctx(P0, new AccessReq(Command.access(new AddAllThen(5, fail), id(1), id(2))), P0, P0);
      if (fail.equals("retry")) {
        assertEquals(CoreReply.Status.RETRY, ((CoreReply) s.deliver(c).replyValue()).status());
      } else {
        RuntimeException e = org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class, () -> s.deliver(c),
            fail + ": the failure reaches the queue, which answers an error");
        assertTrue(!fail.equals("spoil") || e.getMessage().contains("changed nothing"), e.getMessage());
      }
      assertEquals(10, ((Counter) s.object(id(1))).value, fail + ": the first write is undone");
      assertEquals(20, ((Counter) s.object(id(2))).value, fail + ": the second write is undone");
      assertNull(((Counter) s.object(id(2))).junk, fail);
    }
    FakeExecutionContext ok = ctx(P0, new AccessReq(Command.access(new AddAllThen(5, "none"), id(1), id(2))), P0, P0);
    assertEquals("done", ((CoreReply) s.deliver(ok).replyValue()).value());
    assertEquals(15, ((Counter) s.object(id(1))).value, "a command that succeeds keeps its writes");
    assertEquals(25, ((Counter) s.object(id(2))).value);
    // The snapshot still encodes (nothing unencodable was kept).
    server(P0).restore(s.snapshot());
  }

  @Test
  void theApplicationsOwnCopyIsWhatAFailedCommandPutsBack() {
    CopyingCounterServer app = new CopyingCounterServer();
    PartitionServer s = new PartitionServer(app, P0, CLUSTER, codec);
    create(s, P0, 1, 10);
    create(s, P0, 2, 20);
    FakeExecutionContext c = ctx(P0, new AccessReq(Command.access(new AddAllThen(5, "throw"), id(1), id(2))), P0, P0);
    org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, () -> s.deliver(c));
    assertEquals(2, app.copies, "one copy per local object, the application's");
    assertEquals(10, ((Counter) s.object(id(1))).value);
    assertEquals(20, ((Counter) s.object(id(2))).value);
    // Without the check, a command that spoils an object keeps its writes; the object then
    // cannot travel: its move fails and it stays.
    FakeExecutionContext spoil = ctx(P0, new AccessReq(Command.access(new AddAllThen(1, "spoil"), id(1))), P0, P0);
    assertEquals("done", ((CoreReply) s.deliver(spoil).replyValue()).value());
    FakeExecutionContext move = ctx(P0, new MoveReq(new ObjId[] {id(1)}, P0, P1), P1, ORACLE, P0, P1);
    assertTrue(s.deliver(move).isError());
    assertTrue(s.localIds().contains(id(1)), "the object stays");
  }

  @Test
  void anSsmrCommandThatThrowsRollsBackItsLocalObjectsAtEveryPartition() {
    SsmrPair p = ssmrOnCounters1And2(new AddAllThen(5, "throw"));
    p.s0().deliver(p.c0());
    p.s1().deliver(p.c1());
    p.exchange();
    org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, () -> p.s0().resume(p.c0()));
    org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, () -> p.s1().resume(p.c1()));
    assertEquals(10, ((Counter) p.s0().object(id(1))).value);
    assertEquals(20, ((Counter) p.s1().object(id(2))).value);
  }
}
