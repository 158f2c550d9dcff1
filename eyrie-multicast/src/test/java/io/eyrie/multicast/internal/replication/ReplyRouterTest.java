package io.eyrie.multicast.internal.replication;

import static io.eyrie.multicast.internal.state.RulesSupport.G0;
import static io.eyrie.multicast.internal.state.RulesSupport.G1;
import static io.eyrie.multicast.internal.state.RulesSupport.ship;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.internal.Wire.Propose;
import io.eyrie.multicast.internal.Wire.Start;
import io.eyrie.multicast.internal.state.GroupState;
import io.eyrie.multicast.internal.state.RulesSupport;
import io.eyrie.multicast.internal.state.SimDeliverer;
import io.eyrie.multicast.internal.state.StateListener;
import io.eyrie.multicast.internal.state.StoredReply;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Requests waiting on a node for their replies: resends, resubmission and snapshots. */
@Timeout(30)
class ReplyRouterTest {
  private final AtomicLong clock = new AtomicLong(1_000_000_000L);
  private final ReplyRouter router = new ReplyRouter(ReplyRouter.RESUBMIT_AFTER_MS, clock::get);
  private final MsgId id = MsgId.valueOf(0xC11E, 7, 0);

  private void advanceMs(long ms) {
    clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(ms));
  }

  @Test
  void aPromptResendJoinsAndALateResendSubmitsAgain() {
    ReplyRouter.Wait first = router.join(id);
    assertTrue(first.submit(), "the first request submits the message");
    advanceMs(100);
    ReplyRouter.Wait prompt = router.join(id);
    assertFalse(prompt.submit(), "a prompt resend joins the waiting request");
    assertSame(first.reply(), prompt.reply());
    // The submission may have been applied while this node's replica skipped it (a snapshot):
    // its reply never comes here, and only a new submission is answered from the reply table.
    advanceMs(ReplyRouter.RESUBMIT_AFTER_MS);
    ReplyRouter.Wait late = router.join(id);
    assertTrue(late.submit(), "a resend long after the submission submits the message again");
    assertSame(first.reply(), late.reply(), "all requests share the one reply");
    advanceMs(100);
    assertFalse(router.join(id).submit(), "the resubmission covers the next prompt resend");
    StoredReply r = new StoredReply(Status.OK, new byte[] {1}, null);
    router.complete(id, r);
    assertSame(r, first.reply().getNow(null));
    assertEquals(0, router.size());
  }

  @Test
  void aLoadedSnapshotAnswersTheRequestsWaitingForItsReleasedReplies() {
    RulesSupport t = new RulesSupport();
    GroupState s = t.group(G0, new SimDeliverer(null));
    Start done = t.start(1, SimDeliverer.PLAIN, G0, G0);
    Start held = t.start(2, SimDeliverer.PLAIN, G0, G0, G1);
    Start undecided = t.start(3, SimDeliverer.PLAIN, G0, G0, G1);
    t.submit(s, done, held, undecided);
    // g1 proposes for held: it is delivered and executed here, and its reply is held until g1
    // says it started the message too.
    t.decide(s, held, 1);
    assertEquals(1, t.repliesFor(done.id()).size());
    assertEquals(0, t.repliesFor(held.id()).size());
    assertEquals(0, t.repliesFor(undecided.id()).size());
    ReplyRouter.Wait waitDone = router.join(done.id());
    ReplyRouter.Wait waitHeld = router.join(held.id());
    ReplyRouter.Wait waitUndecided = router.join(undecided.id());

    GroupState loaded = t.restore(s, new SimDeliverer(null));
    GroupStateMachine.offerStoredReplies(loaded, new StateListener() {
      @Override
      public void reply(MsgId m, StoredReply reply) {
        router.complete(m, reply);
      }

      @Override
      public void outboxChanged(io.eyrie.multicast.GroupId to) {}
    });
    StoredReply got = waitDone.reply().getNow(null);
    assertEquals(Status.OK, got == null ? -1 : got.status(), "the stored reply answers the waiting request");
    assertArrayEquals(t.repliesFor(done.id()).get(0).reply().body(), got.body());
    assertFalse(waitHeld.reply().isDone(), "a reply still held for another group's start is not released");
    assertFalse(waitUndecided.reply().isDone());
    assertEquals(2, router.size());
  }
}
