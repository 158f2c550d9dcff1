package io.eyrie.multicast.internal.replication;

import static io.eyrie.multicast.internal.state.RulesSupport.G0;
import static io.eyrie.multicast.internal.state.RulesSupport.G1;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.internal.Wire.Decision;
import io.eyrie.multicast.internal.Wire.StartBatch;
import io.eyrie.multicast.testing.Waits;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
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

  /**
   * The gate of design 4.3.1 rule 11: an executed reply of a multi-group message is held until
   * every other destination answers that it started the message, whichever way the reply came
   * (here: a snapshot loaded at the waiting replica, K6); a refusal is not held.
   */
  @Test
  void aLoadedSnapshotAnswersWaitingRequestsThroughTheStartedGate() {
    RulesSupport t = new RulesSupport();
    GroupState s = t.group(G0, new SimDeliverer(null));
    Start done = t.start(1, SimDeliverer.PLAIN, G0, G0);
    Start held = t.start(2, SimDeliverer.PLAIN, G0, G0, G1);
    Start undecided = t.start(3, SimDeliverer.PLAIN, G0, G0, G1);
    t.submit(s, done, held, undecided);
    // g0's leader decides held with g1's component (g1's local timestamp 1): it is delivered and
    // executed here, and its reply recorded.
    long own = s.component(held.id()).lts();
    s.apply(new StartBatch(-1, null, new Decision[] {new Decision(held.id(), new GroupId[] {G0, G1},
        new long[] {own, 1}, held.digest(), false)}, null));
    assertEquals(1, t.repliesFor(done.id()).size());
    assertEquals(1, t.repliesFor(held.id()).size(), "the state records and hands on the reply at once");
    assertEquals(0, t.repliesFor(undecided.id()).size());

    Set<MsgId> startedAtG1 = ConcurrentHashMap.newKeySet();
    List<String> asked = new CopyOnWriteArrayList<>();
    ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor();
    try {
      ReplyRouter gated = new ReplyRouter(ReplyRouter.RESUBMIT_AFTER_MS, clock::get, G0, (g, ids) -> {
        asked.add(g + ":" + ids);
        return CompletableFuture.completedFuture(Set.copyOf(ids.stream().filter(startedAtG1::contains).toList()));
      }, retries);
      ReplyRouter.Wait waitDone = gated.join(done.id(), done.dests());
      ReplyRouter.Wait waitHeld = gated.join(held.id(), held.dests());
      ReplyRouter.Wait waitUndecided = gated.join(undecided.id(), undecided.dests());

      GroupState loaded = t.restore(s, new SimDeliverer(null));
      GroupStateMachine.offerStoredReplies(loaded, new StateListener() {
        @Override
        public void reply(MsgId m, StoredReply reply) {
          gated.complete(m, reply);
        }

        @Override
        public void outboxChanged(GroupId to) {}
      });
      StoredReply got = waitDone.reply().getNow(null);
      assertEquals(Status.OK, got == null ? null : got.status(), "the stored reply answers the waiting request");
      assertArrayEquals(t.repliesFor(done.id()).get(0).reply().body(), got.body());
      Waits.until(java.time.Duration.ofSeconds(10), () -> asked.size() >= 3, () -> "the gate asks g1 again while it has not started the message");
      assertFalse(waitHeld.reply().isDone(), "a reply is not released before g1 started the message");
      assertFalse(waitUndecided.reply().isDone());
      startedAtG1.add(held.id());
      assertEquals(Status.OK, waitHeld.reply().get(10, TimeUnit.SECONDS).status(), "released once g1 started it");
      assertEquals(1, gated.size());

      // A refusal (the message did not execute) is not held by the gate.
      gated.complete(undecided.id(), new StoredReply(Status.STALE, null, "stale"));
      assertEquals(Status.STALE, waitUndecided.reply().getNow(null).status());
    } catch (Exception e) {
      throw new AssertionError(e);
    } finally {
      retries.shutdownNow();
    }
  }
}
