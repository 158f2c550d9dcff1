package io.eyrie.multicast.internal.state;

import static io.eyrie.multicast.internal.state.RulesSupport.G0;
import static io.eyrie.multicast.internal.state.RulesSupport.G1;
import static io.eyrie.multicast.internal.state.RulesSupport.G2;
import static io.eyrie.multicast.internal.state.RulesSupport.G3;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.CodecTest;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.internal.Wire;
import io.eyrie.multicast.internal.Wire.ChannelBatch;
import io.eyrie.multicast.internal.Wire.Start;
import io.eyrie.multicast.internal.state.SimGroups.Ev;
import io.eyrie.multicast.testing.ExpectedErrors;
import io.eyrie.multicast.testing.StatelessDeliverer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Applications and inputs that misbehave (review F5, F6, F7, F9, N4): every such message gets an
 * error reply, deterministically, and the group keeps serving.
 */
@Timeout(60)
// The reused-id tests provoke exactly these, and a node must say them loudly.
@ExpectedErrors({"with other content", "the id was reused", "holds another message with the id",
    "without executing it \\(its id was reused\\)", "disagrees with this group's log"})
class GroupStateRobustnessTest {
  private final RulesSupport t = new RulesSupport();

  /** Modes of {@link Misbehaving}, the second payload number. */
  static final long REPLY = 0;
  static final long THROW_ERROR = 1;
  static final long AWAIT_NON_DEST = 2;
  static final long SEND_UNREGISTERED = 3;
  static final long READ_PAYLOAD = 4;
  static final long SEND_TO_G1 = 5;
  /** Sends four items of 400 kB and one of 3 MB to g1. */
  static final long SEND_BIG = 6;
  /** Answers blocked, with nothing in progress. */
  static final long BLOCK = 7;
  /** Sends an item to g1, then answers blocked. */
  static final long SEND_THEN_BLOCK = 8;
  /** Sends g1 bytes that do not decode, through {@code sendEncoded}. */
  static final long SEND_UNDECODABLE = 9;

  /** An item class that is not registered with the codec. */
  record Unregistered(long v) {}

  /** A deliverer whose behaviour is chosen by the payload {@code {seq, mode}}. */
  static final class Misbehaving extends StatelessDeliverer {
    final List<MsgId> executed = new ArrayList<>();

    @Override
    public Execution deliver(ExecutionContext ctx) {
      Object p = ctx.payload();
      long mode = p instanceof long[] a ? a[1] : READ_PAYLOAD;
      executed.add(ctx.id());
      if (mode == THROW_ERROR) {
        throw new AssertionError("application invariant broken");
      } else if (mode == AWAIT_NON_DEST) {
        return Execution.awaitFrom(List.of(G2));
      } else if (mode == SEND_UNREGISTERED) {
        ctx.send(G1, new Unregistered(7));
        return Execution.reply(1L);
      } else if (mode == SEND_UNDECODABLE) {
        ctx.sendEncoded(G1, new byte[] {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF});
        return Execution.reply(1L);
      } else if (mode == SEND_TO_G1) {
        ctx.send(G1, 42L);
        return Execution.reply(1L);
      } else if (mode == BLOCK) {
        return Execution.blocked();
      } else if (mode == SEND_THEN_BLOCK) {
        ctx.send(G1, 42L);
        return Execution.blocked();
      } else if (mode == SEND_BIG) {
        for (int i = 0; i < 4; i++) {
          ctx.send(G1, new byte[400_000]);
        }
        ctx.send(G1, new byte[3_000_000]);
        return Execution.reply(1L);
      }
      return Execution.reply((long) executed.size());
    }
  }

  private Ev only(MsgId id) {
    List<Ev> r = t.repliesFor(id);
    assertEquals(1, r.size(), () -> "replies " + r);
    return r.get(0);
  }

  private void assertServes(GroupState s, long seq) {
    Start ok = t.start(seq, REPLY, G0, G0);
    t.submit(s, ok);
    assertEquals(Status.OK, only(ok.id()).reply().status(), "the group stopped serving");
  }

  /** Checks that none of the groups keeps a message, pending or queued (describing them if one does). */
  private static void assertNothingKept(GroupState... gs) {
    Supplier<String> state = () -> Arrays.stream(gs).map(GroupState::describe).collect(Collectors.joining());
    assertEquals(0, Arrays.stream(gs).mapToInt(GroupState::pendingCount).sum(), state);
    assertEquals(0, Arrays.stream(gs).mapToInt(GroupState::queuedCount).sum(), state);
  }

  /** Submits m to s and checks that its one reply is an error that says {@code why}. */
  private void submitAndExpectError(GroupState s, Start m, String why) {
    t.submit(s, m);
    Ev e = only(m.id());
    assertEquals(Status.ERROR, e.reply().status());
    assertTrue(e.reply().error().contains(why), e.reply().error());
  }

  /** Review F9: an Error thrown by the application used to escape apply (Ratis stops). */
  @Test
  void applicationErrorBecomesAnErrorReply() {
    GroupState s = t.group(G0, new Misbehaving());
    Start m = t.start(0, THROW_ERROR, G0, G0);
    submitAndExpectError(s, m, "application invariant broken");
    assertServes(s, 1);
  }

  /** Review F9: a deeply nested payload used to overflow the stack while decoding. */
  @Test
  void deeplyNestedPayloadBecomesAnErrorReply() {
    GroupState s = t.group(G0, new Misbehaving());
    Start m = new Start(MsgId.valueOf(RulesSupport.CLIENT, 0, 0), new GroupId[] {G0}, G0,
        CodecTest.nestedLists(t.codec, 200_000), 0);
    submitAndExpectError(s, m, "nest");
    assertServes(s, 1);
  }

  /** Review F5: a wait for a group that is not a destination used to park the head for ever. */
  @Test
  void awaitOnANonDestinationIsAnError() {
    GroupState s = t.group(G0, new Misbehaving());
    Start m = t.start(0, AWAIT_NON_DEST, G0, G0);
    submitAndExpectError(s, m, "not a destination");
    assertEquals(0, s.queuedCount());
    assertServes(s, 1);
  }

  /**
   * A message that says it cannot start while nothing is in progress could never start, and one
   * that sent items before saying so would have started: both are error replies, and the group
   * goes on.
   */
  @Test
  void aBlockedMessageThatCouldNeverStartOrHadStartedIsAnError() {
    GroupState s = t.group(G0, new Misbehaving());
    t.group(G1, new Misbehaving());
    Start alone = t.start(0, BLOCK, G0, G0);
    t.submit(s, alone);
    assertTrue(only(alone.id()).reply().error().contains("no message in progress"), only(alone.id()).reply().error());
    Start sent = t.start(1, SEND_THEN_BLOCK, G0, G0);
    t.submit(s, sent);
    assertTrue(only(sent.id()).reply().error().contains("sent items"), only(sent.id()).reply().error());
    assertEquals(0, s.queuedCount());
    assertServes(s, 2);
  }

  /** The batches a channel sender would ship from {@code from} to {@code to}, encoded. */
  private List<byte[]> batches(GroupState from, GroupState to) {
    List<byte[]> out = new ArrayList<>();
    long[] pos = from.channelPositions(to.self());
    for (long seq = pos[0]; seq < pos[1]; ) {
      List<Object> items = from.outboxRange(to.self(), seq, 1024);
      assertFalse(items.isEmpty());
      out.add(t.codec.encode(new ChannelBatch(from.self(), seq, items.toArray(), pos[2])));
      seq += items.size();
    }
    return out;
  }

  /**
   * Review F6: an item of an unregistered class used to enter the outbox and fail only when the
   * channel sender encoded the batch, wedging the channel for ever. Now the send fails on the
   * apply thread: an error reply, and the channel carries the next items.
   */
  @Test
  void unencodableItemIsAnErrorReplyAndTheChannelKeepsWorking() {
    GroupState g0 = refusedSendThenTheChannelCarriesTheNextItem(SEND_UNREGISTERED, "Unregistered");
    // A snapshot of the sender (outbox included) round-trips.
    GroupState r = t.restore(g0, new Misbehaving());
    assertEquals(List.of(g0.channelPositions(G1)[0], g0.channelPositions(G1)[1]),
        List.of(r.channelPositions(G1)[0], r.channelPositions(G1)[1]));
  }

  /**
   * Bytes handed to {@code sendEncoded} that do not decode fail on the sender's apply thread, as an
   * error reply at every replica, and never reach the receiver, whose channel then carries the next
   * item alone.
   */
  @Test
  void undecodableBytesAreAnErrorReplyAndNeverSent() {
    refusedSendThenTheChannelCarriesTheNextItem(SEND_UNDECODABLE, "do not decode");
  }

  /**
   * Submits a message whose send must be refused ({@code mode}, an error reply that says
   * {@code why}), then one that sends an item to g1: that item alone is shipped and arrives.
   *
   * @return the sending group
   */
  private GroupState refusedSendThenTheChannelCarriesTheNextItem(long mode, String why) {
    GroupState g0 = t.group(G0, new Misbehaving());
    GroupState g1 = t.group(G1, new Misbehaving());
    submitAndExpectError(g0, t.start(0, mode, G0, G0), why);
    Start good = t.start(1, SEND_TO_G1, G0, G0);
    t.submit(g0, good);
    assertEquals(Status.OK, only(good.id()).reply().status());
    List<byte[]> bs = batches(g0, g1);
    assertEquals(1, bs.size());
    g1.apply(t.codec.decode(bs.get(0)));
    assertEquals(1, g1.channelPositions(G0)[2], "g1 received the good item only");
    return g0;
  }

  /** Review F6: channel batches are bounded in bytes too (at least one item each). */
  @Test
  void channelBatchesAreBoundedInBytes() {
    GroupState g0 = t.group(G0, new Misbehaving());
    GroupState g1 = t.group(G1, new Misbehaving());
    Start m = t.start(0, SEND_BIG, G0, G0);
    t.submit(g0, m);
    assertEquals(Status.OK, only(m.id()).reply().status());
    List<byte[]> bs = batches(g0, g1);
    assertTrue(bs.size() >= 3, () -> bs.size() + " batches");
    for (byte[] b : bs) {
      ChannelBatch cb = (ChannelBatch) t.codec.decode(b);
      assertTrue(b.length <= Outboxes.MAX_BATCH_BYTES + 64 || cb.items().length == 1,
          () -> "a batch of " + b.length + " bytes and " + cb.items().length + " items");
      g1.apply(cb);
    }
    assertEquals(5, g1.channelPositions(G0)[2]);
  }

  /** Ships every outbox item between every pair of the groups, a few rounds. */
  private static void exchange(GroupState... gs) {
    RulesSupport.settle(gs);
  }

  /** g decides its version m as conflicting with {@code otherTs} for the other destination (rule 12). */
  private static void decideConflicting(GroupState g, Start m, long otherTs) {
    GroupId[] d = m.dests();
    long[] ts = new long[d.length];
    for (int i = 0; i < d.length; i++) {
      ts[i] = d[i].equals(g.self()) ? g.component(m.id()).lts() : otherTs;
    }
    g.apply(new io.eyrie.multicast.internal.Wire.StartBatch(-1, null,
        new io.eyrie.multicast.internal.Wire.Decision[] {
            new io.eyrie.multicast.internal.Wire.Decision(m.id(), d, ts, m.digest(), true)}, null));
  }

  private Start version(long variant, GroupId reply, GroupId... dests) {
    return new Start(MsgId.valueOf(RulesSupport.CLIENT, 0, 0), dests, reply,
        t.codec.encode(new long[] {0, REPLY, variant}), 0);
  }

  /**
   * Review F7: two Starts with one id and different payloads (a reused client id) reach the two
   * destinations first. Each group used to merge the other's proposal into its own version and
   * execute it: the groups executed different messages under one id. Now neither executes it,
   * the reply group answers an error, and both keep serving.
   */
  @Test
  void reusedIdWithOtherPayloadIsExecutedNowhere() {
    Misbehaving app0 = new Misbehaving();
    Misbehaving app1 = new Misbehaving();
    GroupState g0 = t.group(G0, app0);
    GroupState g1 = t.group(G1, app1);
    Start a = version(1, G0, G0, G1);
    Start b = version(2, G0, G0, G1);
    t.submit(g0, a);
    t.submit(g1, b);
    exchange(g0, g1);
    assertEquals(List.of(), app0.executed, "g0 executed one version");
    assertEquals(List.of(), app1.executed, "g1 executed the other");
    assertEquals(Status.ERROR, only(a.id()).reply().status());
    assertNothingKept(g0, g1);
    assertServes(g0, 1);
  }

  /**
   * Review F7: the versions have different destinations, so g2 waits for a component of g0,
   * which does not count g2 among the message's destinations: g0 must still answer it (a pull,
   * or the Conflict answering g2's Propose after T_fwd), or g2 blocks for ever.
   */
  @Test
  void reusedIdWithOtherDestinationsBlocksNoGroup() {
    Misbehaving app0 = new Misbehaving();
    Misbehaving app1 = new Misbehaving();
    Misbehaving app2 = new Misbehaving();
    GroupState g0 = t.group(G0, app0);
    GroupState g1 = t.group(G1, app1);
    GroupState g2 = t.group(G2, app2);
    Start a = version(1, G0, G0, G1);
    Start b = version(1, G2, G0, G1, G2);
    t.submit(g0, a);
    t.submit(g1, b);
    t.submit(g2, b);
    exchange(g0, g1, g2);
    assertNothingKept(g0, g1, g2);
    assertEquals(List.of(), app0.executed);
    assertEquals(List.of(), app1.executed);
    assertEquals(List.of(), app2.executed);
    List<Ev> r = t.repliesFor(a.id());
    assertTrue(r.size() == 2 && r.stream().allMatch(e -> e.reply().status() == Status.ERROR), () -> "replies " + r);
    // Every group still orders and executes later messages.
    Start next = t.start(RulesSupport.CLIENT, 1, 1, REPLY, G2, G0, G1, G2);
    for (GroupState g : List.of(g0, g1, g2)) {
      t.submit(g, next);
    }
    exchange(g0, g1, g2);
    assertEquals(List.of(next.id()), app0.executed);
    assertEquals(List.of(next.id()), app2.executed);
    assertEquals(Status.OK, only(next.id()).reply().status());
  }

  /**
   * At g0, waits with resumeLater for an item from g1 and replies with it; elsewhere sends an item
   * to g0 when g0 is a destination, and replies. Records what each resume was told about
   * destinations that abandoned the message.
   */
  static final class WaitingForG1 extends StatelessDeliverer {
    final List<MsgId> delivered = new ArrayList<>();
    final List<List<GroupId>> resumedAbandonedBy = new ArrayList<>();

    @Override
    public Execution deliver(ExecutionContext ctx) {
      delivered.add(ctx.id());
      if (ctx.group().equals(G0)) {
        return Execution.resumeLater(List.of(G1));
      }
      if (ctx.dests().contains(G0)) {
        ctx.send(G0, 42L);
      }
      return Execution.reply(1L);
    }

    @Override
    public Execution resume(ExecutionContext ctx) {
      resumedAbandonedBy.add(ctx.abandonedBy());
      if (!ctx.abandonedBy().isEmpty()) {
        return Execution.error("abandoned by " + ctx.abandonedBy());
      }
      return Execution.reply((Long) ctx.received(G1).get(0));
    }
  }

  /** Ships every outbox item from one group to another, once. */
  private static void shipAll(GroupState from, GroupState to) {
    long[] pos = from.channelPositions(to.self());
    List<Object> items = from.outboxRange(to.self(), pos[0], Integer.MAX_VALUE);
    if (!items.isEmpty()) {
      to.apply(new ChannelBatch(from.self(), pos[0], items.toArray(), pos[2]));
    }
  }

  /**
   * Review N4 (a): a message that waits with resumeLater has started (it may have sent items), so
   * a Propose of another version arriving then must not mark it conflicting: it runs to its end
   * and replies OK (the per-replica gate, outside the state, then waits for g1's and g3's start,
   * design 4.3.1 rule 11). Here g0 is the reply group and waits for g1's item.
   */
  @Test
  void aMessageWaitingWithResumeLaterCountsAsStartedWhenAnotherVersionShowsUp() {
    WaitingForG1 app = new WaitingForG1();
    GroupState g0 = t.group(G0, app);
    Start a = version(1, G0, G0, G1, G3);
    Start b = version(2, G0, G0, G2);
    t.submit(g0, a);
    t.decide(g0, a, 5, 5);
    assertEquals(List.of(a.id()), app.delivered, "g0 started a and waits for g1");
    // Another version, from a group outside a's destinations, while a waits.
    RulesSupport.ship(g0, G2, 0, new Wire.Propose(b));
    RulesSupport.ship(g0, G1, 0, new Wire.Data(a.id(), t.codec.encode(42L)));
    assertEquals(List.of(List.of()), app.resumedAbandonedBy, "a ran to its end at g0");
    assertEquals(0, g0.queuedCount());
    assertTrue(g0.started(a.id()), "a finished at g0");
    assertEquals(Status.OK, only(a.id()).reply().status());
  }

  /**
   * Review N4 (b): g1 holds a (to g0 and g1) and learns of b (same id, to g1 and g2) before it
   * starts a, so it ends a with an error without running it. g0 never hears of b: it starts a and
   * waits with resumeLater for g1's item, which never comes. g1 now tells g0 that it abandoned a:
   * g0's wait ends and its application sees g1 in abandonedBy; no group keeps the message.
   */
  @Test
  void aDestinationThatEndsAConflictingMessageReleasesTheOthersWaitingForIt() {
    WaitingForG1 app0 = new WaitingForG1();
    WaitingForG1 app1 = new WaitingForG1();
    WaitingForG1 app2 = new WaitingForG1();
    GroupState g0 = t.group(G0, app0);
    GroupState g1 = t.group(G1, app1);
    GroupState g2 = t.group(G2, app2);
    Start a = version(1, G1, G0, G1);
    Start b = version(2, G1, G1, G2);
    t.submit(g0, a);
    t.submit(g1, a);
    t.submit(g2, b);
    decideConflicting(g2, b, g1.component(a.id()).lts());
    shipAll(g2, g1); // g2's Decided of b reaches g1 before g1 can deliver a (K10: it marks a)
    exchange(g0, g1, g2);
    assertEquals(List.of(a.id()), app0.delivered, "g0 never heard of b and started a");
    assertEquals(List.of(), app1.delivered, "g1 ran neither version");
    assertEquals(List.of(), app2.delivered, "g2 ran neither version");
    assertEquals(List.of(List.of(G1)), app0.resumedAbandonedBy, "g0 was told that g1 abandoned a");
    assertNothingKept(g0, g1, g2);
    assertEquals(Status.ERROR, only(a.id()).reply().status());
    // A snapshot taken while g0 waited would carry the abandonment too: the item without value
    // round-trips (SnapshotIo writes null bytes). Every group still orders and executes.
    Start next = t.start(RulesSupport.CLIENT, 1, 1, REPLY, G1, G0, G1);
    t.submit(g0, next);
    t.submit(g1, next);
    exchange(g0, g1, g2);
    assertEquals(List.of(a.id(), next.id()), app0.delivered);
    assertEquals(Status.OK, only(next.id()).reply().status(), () -> g0.describe() + g1.describe());
  }

  /**
   * Review N4 (b), with the message not yet delivered at another destination: g0 holds a pending
   * (undecided) when g1's word that it abandoned a arrives, so g0 learns that another version
   * exists and does not execute a either; g3 takes g1's Decided, which carries the conflict flag
   * (K10), and does not execute it.
   */
  @Test
  void aPendingMessageAbandonedByAnotherDestinationIsNotExecuted() {
    WaitingForG1 app0 = new WaitingForG1();
    WaitingForG1 app3 = new WaitingForG1();
    GroupState g0 = t.group(G0, app0);
    GroupState g1 = t.group(G1, new WaitingForG1());
    GroupState g2 = t.group(G2, new WaitingForG1());
    GroupState g3 = t.group(G3, app3);
    Start a = version(1, G1, G0, G1, G3);
    Start b = version(2, G1, G1, G2);
    t.submit(g0, a);
    t.submit(g1, a);
    t.submit(g3, a);
    t.submit(g2, b);
    decideConflicting(g2, b, g1.component(a.id()).lts());
    shipAll(g2, g1); // g1 learns of b and marks a
    t.decide(g1, a, g0.component(a.id()).lts(), g3.component(a.id()).lts()); // g1 delivers a and ends it
    assertNothingKept(g1);
    g0.apply(new io.eyrie.multicast.internal.Wire.ChannelBatch(G1, 1, new Object[] {new Wire.Abandoned(a.id())}, 0));
    assertEquals(1, g0.pendingCount(), "g1's word that it abandoned a arrives before g0 decided a");
    exchange(g0, g1, g2, g3);
    assertEquals(List.of(), app0.delivered, "g0 learned of another version: it does not execute a");
    // g3 takes g1's Decided, which carries the conflict flag (K10): it does not run a either.
    assertEquals(List.of(), app3.delivered);
    assertNothingKept(g0, g1, g2, g3);
  }
}
