package io.eyrie.multicast.internal;

import static io.eyrie.multicast.internal.RulesSupport.G0;
import static io.eyrie.multicast.internal.RulesSupport.G1;
import static io.eyrie.multicast.internal.RulesSupport.G2;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.internal.Wire.Bundle;
import io.eyrie.multicast.internal.Wire.ChannelBatch;
import io.eyrie.multicast.internal.Wire.Start;
import io.eyrie.multicast.internal.Wire.StartBatch;
import io.eyrie.multicast.testing.FakeRaftClient;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The real {@link GroupLink} and {@link ChannelSender}s over hand-driven {@link GroupState}s: a
 * node leading g0 and g2 sends g1 its client starts and both groups' channel batches in one
 * request, which the test applies at a real g1 and answers; a fake Ratis client captures the
 * requests.
 */
@Timeout(60)
class GroupLinkTest {
  private final RulesSupport t = new RulesSupport();
  private final GroupState g0 = t.group(G0, new SimDeliverer(null));
  private final GroupState g2 = t.group(G2, new SimDeliverer(null));
  /** The receiver, applying bundles. */
  private final GroupState g1 = t.group(G1, new SimDeliverer(null));
  /** Another receiver, applying the same parts as separate entries. */
  private final GroupState g1Parts = t.group(G1, new SimDeliverer(null));
  private final List<Object> sent = new ArrayList<>();
  private final List<CompletableFuture<RaftClientReply>> replies = new ArrayList<>();
  private final List<Start> failedStarts = new ArrayList<>();
  private long seq = 100;

  /** State reads by the senders (each takes the group's lock in a node). */
  private int reads;

  private ChannelSender.StateReader reader(GroupState s) {
    return new ChannelSender.StateReader() {
      @Override
      public <T> T read(Function<GroupState, T> f) {
        reads++;
        return f.apply(s);
      }
    };
  }

  private ChannelSender sender(GroupState s, GroupId from) {
    ChannelSender c = new ChannelSender(reader(s), from, G1, null, t.codec, 1, 16);
    c.activate();
    return c;
  }

  private GroupLink link(ChannelSender... senders) {
    GroupLink l = new GroupLink(G1, new RaftClientHolder(this::fakeClient), t.codec, 1, 512,
        (starts, err) -> failedStarts.addAll(starts), () -> {});
    for (ChannelSender s : senders) {
      l.add(s);
    }
    return l;
  }

  /** Starts multicast to {@code from} and g1: each puts a proposal into {@code from}'s outbox to g1. */
  private void proposals(GroupState s, GroupId from, int n) {
    for (int i = 0; i < n; i++) {
      GroupId[] dests = from.compareTo(G1) < 0 ? new GroupId[] {from, G1} : new GroupId[] {G1, from};
      t.submit(s, t.start(seq++, SimDeliverer.PLAIN, from, dests));
    }
  }

  /** A start to g1 alone. */
  private Start single() {
    return t.start(seq++, SimDeliverer.PLAIN, G1, G1);
  }

  /** A Ratis client whose async sends are captured and left pending. */
  private RaftClient fakeClient() {
    return FakeRaftClient.capturing(b -> sent.add(t.codec.decode(b)), replies::add);
  }



  private static RaftClientReply failure() {
    return RaftClientReply.newBuilder().setClientId(ClientId.randomId()).setServerId(RaftPeerId.valueOf("n1"))
        .setGroupId(RaftGroupId.randomId()).setCallId(1).setSuccess(false)
        .setException(new org.apache.ratis.protocol.exceptions.NotLeaderException(
            org.apache.ratis.protocol.RaftGroupMemberId.valueOf(RaftPeerId.valueOf("n1"), RaftGroupId.randomId()),
            null, List.of()))
        .build();
  }

  /** Applies a request at g1 as one entry, and its parts at g1Parts as separate entries; returns g1's answer. */
  private long[] apply(Object request) {
    if (request instanceof Bundle b) {
      if (b.starts() != null) {
        g1Parts.apply(b.starts());
      }
      long[] parts = new long[b.batches().length];
      for (int i = 0; i < parts.length; i++) {
        parts[i] = g1Parts.apply(b.batches()[i]);
      }
      long[] results = g1.applyBundle(b);
      assertArrayEquals(parts, results, "a bundle answers what its parts answer as separate entries");
      return results;
    }
    g1Parts.apply(request);
    return new long[] {g1.apply(request)};
  }

  /** Entries handed to the relayer, with the futures the test completes. */
  private final List<Object> relayedOut = new ArrayList<>();
  private final List<CompletableFuture<byte[]>> relayAnswers = new ArrayList<>();

  private GroupLink relayingLink(boolean leaderKnown, ChannelSender... senders) {
    GroupLink l = new GroupLink(G1, new RaftClientHolder(this::fakeClient), t.codec, 1, 512,
        (starts, err) -> failedStarts.addAll(starts), () -> {}, (g, entry) -> {
          if (!leaderKnown) {
            return null;
          }
          relayedOut.add(entry);
          CompletableFuture<byte[]> f = new CompletableFuture<>();
          relayAnswers.add(f);
          return f;
        });
    for (ChannelSender s : senders) {
      l.add(s);
    }
    return l;
  }

  /**
   * At the leader's node: what another node relayed waits for the one request in flight, goes
   * out with the next one (never relayed on), and is answered with its own batches' results.
   */
  @Test
  void relayedPartsGoOutInTheNextRequestAndAreAnsweredWithTheirResults() throws Exception {
    proposals(g2, G2, 3);
    ChannelSender s2 = sender(g2, G2);
    // Another node's batch from g2 (as g2's leader there would send it), taken by this link.
    Object[] items = s2.prepare(false).batch().items();
    s2.deactivate();
    GroupLink link = relayingLink(false);
    Start x = single();
    link.submit(x);
    assertEquals(1, sent.size(), "no known leader elsewhere: written here");
    CompletableFuture<byte[]> answer = link.relayed(new ChannelBatch(G2, 0, items, 0));
    Start y = single();
    link.submit(y);
    assertEquals(1, sent.size(), "one request in flight in all");
    replies.get(0).complete(FakeRaftClient.reply(apply(sent.get(0))));
    assertEquals(2, sent.size());
    Bundle b = assertInstanceOf(Bundle.class, sent.get(1));
    assertEquals(List.of(y.id()), List.of(b.starts().starts()).stream().map(Start::id).toList());
    assertEquals(1, b.batches().length);
    assertEquals(G2, b.batches()[0].from());
    long[] results = apply(b);
    assertArrayEquals(new long[] {3}, results);
    assertTrue(relayedOut.isEmpty(), "what was relayed here is written here");
    replies.get(1).complete(FakeRaftClient.reply(results));
    assertEquals(3, ByteBuffer.wrap(answer.get()).getLong(), "the relaying node learns g1 expects item 3 from g2");
    assertTrue(link.relayed("not an entry").isCompletedExceptionally(), "a relayed object that is no entry is refused");
  }

  /** At another node: requests go to the leader's node; a failed relay is written directly instead. */
  @Test
  void requestsAreRelayedAndAFailedRelayIsWrittenDirectly() {
    GroupLink link = relayingLink(true);
    Start x = single();
    link.submit(x);
    assertEquals(0, sent.size());
    StartBatch sb = assertInstanceOf(StartBatch.class, relayedOut.get(0));
    assertEquals(x.id(), sb.starts()[0].id());
    Start y = single();
    link.submit(y);
    assertEquals(1, relayedOut.size(), "one relay in flight");
    relayAnswers.get(0).complete(new byte[0]);
    assertEquals(2, relayedOut.size(), "the answer lets the next one go");
    relayAnswers.get(1).completeExceptionally(new IllegalStateException("not the leader any more"));
    assertEquals(1, sent.size(), "the failed relay's entry is written through the client");
    StartBatch direct = assertInstanceOf(StartBatch.class, sent.get(0));
    assertEquals(y.id(), direct.starts()[0].id());
    assertTrue(failedStarts.isEmpty());
    replies.get(0).complete(FakeRaftClient.reply());
    assertTrue(link.describe().contains("inFlight=0+0"), "the window is free again: " + link.describe());
    link.submit(single());
    assertEquals(3, relayedOut.size(), "and the next request is relayed again");
    assertTrue(link.describe().contains("relays=3 answered=1"), link.describe());
  }

  @Test
  void startsAndEveryLedGroupsBatchesToOneGroupTravelInOneEntry() {
    proposals(g0, G0, 5);
    proposals(g2, G2, 3);
    ChannelSender s0 = sender(g0, G0);
    ChannelSender s2 = sender(g2, G2);
    GroupLink link = link(s0, s2);
    Start x = single();
    link.submit(x);

    assertEquals(1, sent.size(), "one request for the start and both channels");
    Bundle b = assertInstanceOf(Bundle.class, sent.get(0));
    assertEquals(List.of(x.id()), List.of(b.starts().starts()).stream().map(Start::id).toList());
    assertEquals(2, b.batches().length);
    assertEquals(G0, b.batches()[0].from());
    assertEquals(5, b.batches()[0].items().length);
    assertEquals(G2, b.batches()[1].from());
    assertEquals(3, b.batches()[1].items().length);

    // While it is in flight, more starts and items accumulate for the next request.
    Start y = single();
    Start z = single();
    link.submit(y);
    link.submit(z);
    proposals(g0, G0, 2);
    link.channelsChanged();
    link.pump(false);
    assertEquals(1, sent.size(), "one request with starts in flight, and g0's channel has its batch in it");

    long[] results = apply(b);
    assertArrayEquals(new long[] {5, 3}, results, "g1 now expects item 5 from g0 and item 3 from g2");
    assertEquals(5, g1.channelPositions(G0)[2]);
    assertEquals(3, g1.channelPositions(G2)[2]);
    replies.get(0).complete(FakeRaftClient.reply(results));

    assertEquals(2, sent.size(), "the reply lets the accumulated traffic go");
    Bundle b2 = assertInstanceOf(Bundle.class, sent.get(1));
    assertEquals(List.of(y.id(), z.id()), List.of(b2.starts().starts()).stream().map(Start::id).toList());
    assertEquals(1, b2.batches().length, "g2 has nothing new");
    assertEquals(G0, b2.batches()[0].from());
    assertEquals(5, b2.batches()[0].firstSeq(), "g0's next batch follows the acknowledged one");
    assertEquals(2, b2.batches()[0].items().length);
    assertArrayEquals(new long[] {7}, apply(b2));
    replies.get(1).complete(FakeRaftClient.reply(7));
    assertEquals(2, sent.size(), "nothing left to send");
    assertEquals(t.snapshot(g1Parts).length, t.snapshot(g1).length);
    assertArrayEquals(t.snapshot(g1Parts), t.snapshot(g1), "applying a bundle changes g1 as its parts do");
    assertTrue(failedStarts.isEmpty());
  }

  @Test
  void aFailedRequestFailsItsStartsAndEveryBatchIsSentAgain() throws InterruptedException {
    proposals(g0, G0, 4);
    proposals(g2, G2, 2);
    ChannelSender s0 = sender(g0, G0);
    ChannelSender s2 = sender(g2, G2);
    GroupLink link = link(s0, s2);
    Start x = single();
    link.submit(x);
    assertEquals(1, sent.size());
    replies.get(0).complete(failure());

    assertEquals(List.of(x), failedStarts, "the start's submitter hears of the failure");
    // The senders pause 50 ms after a failure, then resend from the failed batches (the node's
    // ticker pumps every link every 10 ms with tick = true, which asks every sender).
    long deadline = System.nanoTime() + 5_000_000_000L;
    while (sent.size() < 2 && System.nanoTime() < deadline) {
      link.pump(true);
      Thread.onSpinWait();
    }
    assertTrue(sent.size() >= 2, "the channels resend after their pause");
    // Both channels may not pause out at the same instant: the second may resend in a request of
    // its own (channel batches do not wait behind one another), or after the first is answered.
    long covered = 0;
    int next = 1;
    while (covered < 6 && System.nanoTime() < deadline) {
      if (next < sent.size()) {
        Object again = sent.get(next);
        List<ChannelBatch> batches = again instanceof Bundle b ? List.of(b.batches()) : List.of((ChannelBatch) again);
        for (ChannelBatch cb : batches) {
          assertEquals(0, cb.firstSeq(), "resent from the failed batch of " + cb.from());
          covered += cb.items().length;
        }
        if (again instanceof Bundle b) {
          assertNull(b.starts(), "a failed start is not resent by the link: its submitter decides");
        }
        replies.get(next).complete(FakeRaftClient.reply(apply(again)));
        next++;
      } else {
        link.pump(true);
        Thread.onSpinWait();
      }
    }
    assertEquals(6, covered, "every item of both channels was sent again");
    assertTrue(sent.size() <= 3, "at most one request per channel: " + sent.size());
  }

  @Test
  void channelBatchesDoNotWaitBehindAStartBatchInFlight() {
    ChannelSender s2 = sender(g2, G2);
    GroupLink link = link(s2);
    link.submit(single());
    assertEquals(1, sent.size());
    assertInstanceOf(StartBatch.class, sent.get(0));
    // More starts while the start window is full do not read the led groups' states.
    int before = reads;
    link.submit(single());
    assertEquals(before, reads, "a submission with no channel news asked the senders");
    // g2 proposes while the starts are in flight: its batch goes at once, on its own.
    proposals(g2, G2, 2);
    link.channelsChanged();
    link.pump(false);
    assertEquals(2, sent.size(), "a ready channel batch does not wait for the start batch's round");
    ChannelBatch cb = assertInstanceOf(ChannelBatch.class, sent.get(1));
    assertEquals(2, cb.items().length);
    // g2's next batch waits for its own window (one batch in flight per channel), and more
    // starts wait for the start request.
    proposals(g2, G2, 1);
    link.channelsChanged();
    Start y = single();
    link.submit(y);
    assertEquals(2, sent.size(), "g2's window holds its next batch and the start window the starts");
    replies.get(1).complete(FakeRaftClient.reply(apply(sent.get(1))));
    assertEquals(3, sent.size(), "g2's batch came back: its next batch goes");
    ChannelBatch next = assertInstanceOf(ChannelBatch.class, sent.get(2));
    assertEquals(2, next.firstSeq());
    assertEquals(1, next.items().length);
    // The start request's reply lets the queued starts go.
    replies.get(0).complete(FakeRaftClient.reply(apply(sent.get(0))));
    assertEquals(4, sent.size());
    StartBatch sb = assertInstanceOf(StartBatch.class, sent.get(3));
    assertEquals(2, sb.starts().length);
    assertEquals(y.id(), sb.starts()[1].id());
  }

  @Test
  void aLoneBatchOrALoneStartBatchTravelsAsBefore() {
    proposals(g2, G2, 2);
    ChannelSender s2 = sender(g2, G2);
    GroupLink link = link(s2);
    link.pump(false);
    assertEquals(1, sent.size());
    assertInstanceOf(ChannelBatch.class, sent.get(0), "one channel batch alone is a plain channel batch entry");
    replies.get(0).complete(FakeRaftClient.reply(apply(sent.get(0))));
    link.submit(single());
    assertEquals(2, sent.size());
    assertInstanceOf(StartBatch.class, sent.get(1), "starts alone are a plain start batch entry");
  }
}
