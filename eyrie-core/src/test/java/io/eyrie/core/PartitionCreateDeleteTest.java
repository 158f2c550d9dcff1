package io.eyrie.core;

import static io.eyrie.multicast.testing.TestGroups.ORACLE;
import static io.eyrie.multicast.testing.TestGroups.P0;
import static io.eyrie.multicast.testing.TestGroups.P1;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.protocol.Begun;
import io.eyrie.core.protocol.CoreReply;
import io.eyrie.core.protocol.CreateReq;
import io.eyrie.core.protocol.DeleteReq;
import io.eyrie.core.protocol.SsmrReq;
import io.eyrie.core.protocol.Verdict;
import io.eyrie.multicast.testing.FakeExecutionContext;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Creates and deletes at a partition follow the oracle's verdict, whatever the application does. */
@Timeout(10)
class PartitionCreateDeleteTest extends PartitionServerFixture {
  @Test
  void createAndDeleteFollowTheOraclesVerdict() {
    PartitionServer s = server(P0);
    CreateReq req = new CreateReq(Command.create(id(3), 1L), P0);
    FakeExecutionContext c = ctx(P0, req, P0, ORACLE, P0);
    s.deliver(c);
    c.receive(ORACLE, new Verdict(Verdict.Status.NOK, P1));
    assertEquals(CoreReply.Status.EXISTS, ((CoreReply) s.resume(c).replyValue()).status(), "the oracle knows it elsewhere");
    assertNull(s.object(id(3)));

    create(s, P0, 3, 1);
    DeleteReq del = new DeleteReq(Command.delete(id(3), null), P0);
    FakeExecutionContext d = ctx(P0, del, P0, ORACLE, P0);
    assertTrue(s.deliver(d).isResumeLater(), "waits for the verdict off the queue, holding the object");
    assertEquals(List.of(new FakeExecutionContext.Sent(ORACLE, new Begun(P0))), d.sent());
    d.receive(ORACLE, new Verdict(Verdict.Status.OK, P0));
    assertEquals(CoreReply.Status.OK, ((CoreReply) s.resume(d).replyValue()).status());
    assertNull(s.object(id(3)));
    assertEquals(List.of(id(3)), ((CounterServer) s.app()).deleted, "the delete hook saw the object");

    FakeExecutionContext again = ctx(P0, del, P0, ORACLE, P0);
    s.deliver(again);
    again.receive(ORACLE, new Verdict(Verdict.Status.NOK, null));
    CoreReply r = (CoreReply) s.resume(again).replyValue();
    assertEquals(CoreReply.Status.NOT_FOUND, r.status(), "deleting an absent object says so");
    assertArrayEquals(new ObjId[] {id(3)}, r.extra(), "and names it");
  }

  /**
   * A create whose object the application cannot make (it throws, returns another id, or an
   * object that cannot be encoded) tells the oracle so in Begun, before the oracle decides; the
   * oracle refuses, and nothing is created.
   */
  @Test
  void aCreateTheApplicationCannotMakeIsReportedInBegunAndNothingIsCreated() {
    for (long bad : new long[] {-1L, 13L, 14L, 15L}) {
      PartitionServer s = server(P0);
      long id = 4;
      FakeExecutionContext c = ctx(P0, new CreateReq(Command.create(id(id), bad), P0), P0, ORACLE, P0);
      assertTrue(s.deliver(c).isResumeLater(), "it still waits for the oracle's verdict");
      Begun b = (Begun) c.sent().get(0).item();
      assertTrue(b.refusal() != null, "value " + bad + ": the refusal goes with Begun");
      assertTrue(b.refusal().contains(bad == -1L ? "cannot be encoded" : bad == 13L ? "unlucky" : bad == 14L ? "id #5"
          : "cannot be decoded"), b.refusal());
      c.receive(ORACLE, new Verdict(Verdict.Status.REFUSED, null, b.refusal()));
      CoreReply r = (CoreReply) s.resume(c).replyValue();
      assertEquals(CoreReply.Status.REFUSED, r.status());
      assertTrue(String.valueOf(r.value()).contains("nothing changed"), String.valueOf(r.value()));
      assertNull(s.object(id(id)), "an object that could never be moved or snapshotted is not kept");
      assertTrue(s.object(id(id + 1)) == null);
      // A later create of the same id that works is made afresh.
      create(s, P0, id, 2);
      assertEquals(2, ((Counter) s.object(id(id))).value);
    }
    // An S-SMR create is made at every destination partition: each reports the same.
    PartitionServer s = server(P1);
    FakeExecutionContext c = ctx(P1, new SsmrReq(Command.create(id(8), 13L)), P0, ORACLE, P0, P1);
    s.deliver(c);
    assertTrue(((Begun) c.sent().get(0).item()).refusal().contains("unlucky"));
  }

  @Test
  void aPreparedCreateSurvivesASnapshotAndIsInstalledByTheVerdict() {
    PartitionServer s = server(P0);
    FakeExecutionContext c = ctx(P0, new CreateReq(Command.create(id(6), 5L), P0), P0, ORACLE, P0);
    s.deliver(c);
    PartitionServer r = server(P0);
    r.restore(s.snapshot());
    c.receive(ORACLE, new Verdict(Verdict.Status.OK, P0));
    assertEquals(CoreReply.Status.OK, ((CoreReply) r.resume(c).replyValue()).status());
    assertEquals(5, ((Counter) r.object(id(6))).value, "the object made when the create started");
  }

  @Test
  void aDeleteWhoseHookThrowsStillTookEffectAndSaysSo() {
    PartitionServer s = server(P0);
    create(s, P0, 3, 7);
    FakeExecutionContext d = ctx(P0, new DeleteReq(Command.delete(id(3), null), P0), P0, ORACLE, P0);
    s.deliver(d);
    d.receive(ORACLE, new Verdict(Verdict.Status.OK, P0));
    assertEquals(CoreReply.Status.OK, ((CoreReply) s.resume(d).replyValue()).status(), "the oracle forgot it; so did we");
    assertNull(s.object(id(3)));
  }
}
