package io.eyrie.multicast.internal.replication;

import static io.eyrie.multicast.internal.state.RulesSupport.G0;
import static io.eyrie.multicast.internal.state.RulesSupport.G1;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.eyrie.multicast.internal.Wire.ChannelBatch;
import io.eyrie.multicast.internal.Wire.Propose;
import io.eyrie.multicast.internal.state.GroupState;
import io.eyrie.multicast.internal.state.RulesSupport;
import io.eyrie.multicast.internal.state.SimDeliverer;
import io.eyrie.multicast.testing.FakeRaftClient;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.RaftClientReply;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The real {@link ChannelSender} over a hand-driven {@link GroupState}: the test applies an
 * acknowledgement (which trims the outbox) between the sender's state reads, as the Ratis apply
 * thread may, and a fake Ratis client captures the batches.
 */
@Timeout(60)
class ChannelSenderTest {
  private static final int ITEMS = 30;
  private static final long RECEIVED = 10;

  private final RulesSupport t = new RulesSupport();
  private final GroupState s = t.group(G0, new SimDeliverer(null));
  private final List<ChannelBatch> sent = new ArrayList<>();
  private final List<CompletableFuture<RaftClientReply>> replies = new ArrayList<>();
  /** After this many reads (counted from arming), the test applies {@link #trim} once. */
  private int trimAfter = -1;
  private int reads;
  private Object trim;

  ChannelSenderTest() {
    // Items towards g1: each message forwarded there (design 4.3.1, rule 9), one Propose each.
    List<io.eyrie.multicast.internal.Wire.Forward> forwards = new ArrayList<>();
    for (int i = 0; i < ITEMS; i++) {
      io.eyrie.multicast.internal.Wire.Start st = t.start(i, SimDeliverer.PLAIN, G0, G0, G1);
      t.submit(s, st);
      forwards.add(new io.eyrie.multicast.internal.Wire.Forward(st.id(), new io.eyrie.multicast.GroupId[] {G1}));
    }
    s.apply(new io.eyrie.multicast.internal.Wire.StartBatch(-1, null, null,
        forwards.toArray(new io.eyrie.multicast.internal.Wire.Forward[0])));
  }

  private final ChannelSender.StateReader reader = new ChannelSender.StateReader() {
    @Override
    public <T> T read(Function<GroupState, T> f) {
      T out = f.apply(s);
      if (++reads == trimAfter) {
        s.apply(trim);
      }
      return out;
    }
  };

  private ChannelSender sender(int window, int maxItems) {
    RaftClientHolder holder = new RaftClientHolder(this::fakeClient);
    return new ChannelSender(reader, G0, G1, holder, t.codec, window, maxItems);
  }

  /** A Ratis client whose async sends are captured and left pending. */
  private RaftClient fakeClient() {
    return FakeRaftClient.capturing(b -> sent.add((ChannelBatch) t.codec.decode(b)), replies::add);
  }



  private static String key(Object item) {
    return item instanceof Propose p ? "propose " + p.start().id() : String.valueOf(item);
  }

  /** The outbox towards g1, as keys indexed by sequence number. */
  private List<String> outbox() {
    long[] pos = s.channelPositions(G1);
    assertArrayEquals(new long[] {0, ITEMS, 0}, pos);
    List<String> out = new ArrayList<>();
    for (Object item : s.outboxRange(G1, 0, ITEMS)) {
      out.add(key(item));
    }
    return out;
  }

  @ParameterizedTest(name = "trim after read {0}")
  @ValueSource(ints = {1, 2, 3})
  void aTrimBetweenReadsNeitherMislabelsNorLosesNorDuplicatesItems(int k) {
    List<String> expected = outbox();
    // g1 has applied items 0..9 (sent by an earlier leader of g0); its ack is applied here
    // after the sender's k-th state read, as the apply thread may do at any moment.
    trim = new ChannelBatch(G1, 0, new Object[0], RECEIVED);
    ChannelSender sender = sender(8, 16);
    sender.activate();
    reads = 0;
    trimAfter = k;
    sender.pump(false);
    assertEquals(RECEIVED, s.channelPositions(G1)[0], "the acknowledgement trimmed the outbox");
    assertFalse(sent.isEmpty(), "nothing sent");
    for (ChannelBatch b : sent) {
      for (int i = 0; i < b.items().length; i++) {
        long seq = b.firstSeq() + i;
        assertEquals(expected.get((int) seq), key(b.items()[i]),
            "label " + seq + " of the batch at " + b.firstSeq() + " carries another item");
      }
    }
    // The receiver applies an item only when its label is the next it expects.
    long nextIn = RECEIVED;
    List<String> applied = new ArrayList<>();
    for (ChannelBatch b : sent) {
      for (int i = 0; i < b.items().length; i++) {
        if (b.firstSeq() + i == nextIn) {
          nextIn++;
          applied.add(key(b.items()[i]));
        }
      }
    }
    assertEquals(expected.subList((int) RECEIVED, ITEMS), applied, "the receiver must get every item once, in order");
  }

  @Test
  void aReplyFromAReceiverAheadSkipsWhatItAlreadyHas() {
    outbox();
    ChannelSender sender = sender(1, 5);
    sender.activate();
    sender.pump(false);
    assertEquals(1, sent.size());
    assertEquals(0, sent.get(0).firstSeq());
    // The receiver had items up to 9 already (sent by an earlier leader).
    replies.get(0).complete(FakeRaftClient.reply(RECEIVED));
    assertEquals(2, sent.size());
    assertEquals(RECEIVED, sent.get(1).firstSeq(), "the sender resent items the receiver already had");
    // A receiver behind the batch's end makes the sender go back (a batch in between was lost).
    replies.get(1).complete(FakeRaftClient.reply(RECEIVED + 2));
    assertEquals(3, sent.size());
    assertEquals(RECEIVED + 2, sent.get(2).firstSeq(), "go-back-N to the receiver's position");
  }
}
