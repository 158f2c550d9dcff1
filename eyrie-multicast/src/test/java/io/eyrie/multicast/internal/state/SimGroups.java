package io.eyrie.multicast.internal.state;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.CodecRegistry;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.Wire.ChannelBatch;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.function.Consumer;

/**
 * The mechanics of the deterministic simulation: N groups, each run as two replicas fed the same
 * log entries in lockstep (the second replica decodes its own copy of every entry), replicas replaced by ones restored from snapshots, and one simulated channel sender per
 * ordered pair of groups (go-back-N over the leader replica's outbox, with injected duplicates,
 * gaps, stale acknowledgements, lost batches and lost replies). No threads, no time.
 */
public final class SimGroups {
  /** Large enough that no client record ever expires in the simulation. */
  static final long NO_EXPIRY = 1L << 40;
  static final int REPLICAS = 2;

  /** One reply emitted by a replica's listener. */
  public record Ev(MsgId id, StoredReply reply) {
    boolean same(Ev o) {
      return id.equals(o.id) && reply.status() == o.reply.status() && Arrays.equals(reply.body(), o.reply.body())
          && Objects.equals(reply.error(), o.reply.error());
    }
  }

  /** Receives the replies of each applied entry (as emitted, identically, by every replica). */
  interface ReplySink {
    void replies(GroupId g, Object entry, List<Ev> events);
  }

  final class Replica {
    GroupState state;
    SimDeliverer app;
    final List<Ev> events = new ArrayList<>();

    Replica(GroupId g) {
      app = new SimDeliverer(violations::add);
      state = new GroupState(g, groups, app, codec, expiryMs);
      attach();
    }

    void attach() {
      state.setListener(new StateListener() {
        @Override
        public void reply(MsgId id, StoredReply reply) {
          events.add(new Ev(id, reply));
        }

        @Override
        public void outboxChanged(GroupId to) {}
      });
    }
  }

  final Random rnd;
  final Codec codec = new Codec(CodecRegistry.empty());
  final List<GroupId> groups = new ArrayList<>();
  final int n;
  final long expiryMs;
  final Replica[][] replicas;
  final int[] leader;
  final List<String> violations = new ArrayList<>();
  /** Per ordered pair [from][to]: the sender's cursor, last ack sent, and a pending failure. */
  final long[][] sent;
  final long[][] lastAck;
  final long[][] failAt;
  ReplySink sink = (g, e, ev) -> {};
  /** Probability (1/x) of restoring the second replica after an entry; 0 = never. */
  int restoreEvery = 50;
  long entriesApplied;
  long restores;
  long batchesLost;
  long gapsAndDups;

  SimGroups(int n, Random rnd, long expiryMs) {
    this.n = n;
    this.rnd = rnd;
    this.expiryMs = expiryMs;
    for (int i = 0; i < n; i++) {
      groups.add(GroupId.valueOf("g" + i));
    }
    replicas = new Replica[n][REPLICAS];
    for (int i = 0; i < n; i++) {
      for (int r = 0; r < REPLICAS; r++) {
        replicas[i][r] = new Replica(groups.get(i));
      }
    }
    leader = new int[n];
    sent = new long[n][n];
    lastAck = new long[n][n];
    failAt = new long[n][n];
    for (long[] row : lastAck) {
      Arrays.fill(row, -1);
    }
    for (long[] row : failAt) {
      Arrays.fill(row, Long.MAX_VALUE);
    }
  }

  GroupId gid(int i) {
    return groups.get(i);
  }

  int idx(GroupId g) {
    return groups.indexOf(g);
  }

  GroupState lead(int g) {
    return replicas[g][leader[g]].state;
  }

  /**
   * Applies one entry to every replica of group {@code g} and checks that they agree on the
   * result and on the replies; then hands the replies to the sink.
   */
  long apply(int g, Object entry) {
    byte[] bytes = codec.encode(entry);
    long result = 0;
    List<Ev> first = null;
    for (int r = 0; r < REPLICAS; r++) {
      Replica rep = replicas[g][r];
      rep.events.clear();
      // Like Ratis: the leader applies the object it decoded when accepting the entry, the
      // followers decode their own copies from the log.
      long res = rep.state.apply(r == 0 ? entry : codec.decode(bytes));
      if (r == 0) {
        result = res;
        first = new ArrayList<>(rep.events);
      } else {
        assertEquals(result, res, () -> gid(g) + ": replicas return different results for " + entry);
        List<Ev> evs = rep.events;
        boolean same = evs.size() == first.size();
        for (int i = 0; same && i < evs.size(); i++) {
          same = evs.get(i).same(first.get(i));
        }
        if (!same) {
          fail(gid(g) + ": replicas emit different replies for entry " + entriesApplied);
        }
      }
    }
    entriesApplied++;
    sink.replies(gid(g), entry, first);
    if (restoreEvery > 0 && rnd.nextInt(restoreEvery) == 0) {
      restore(g, REPLICAS - 1);
    }
    return result;
  }

  static byte[] snapshot(GroupState s) {
    Output out = new Output(4096, -1);
    GroupStateSnapshot.write(s, out);
    return out.toBytes();
  }

  /**
   * Replaces a replica by a fresh one (fresh application too) restored from its snapshot, and
   * checks that the restored state writes the same bytes.
   */
  void restore(int g, int r) {
    byte[] snap = snapshot(replicas[g][r].state);
    Replica fresh = new Replica(gid(g));
    Input in = new Input(snap);
    GroupStateSnapshot.read(fresh.state, in);
    assertEquals(snap.length, in.position(), "the snapshot reader must consume the whole snapshot");
    fresh.attach();
    if (restores % 4 == 0) {
      assertArrayEquals(snap, snapshot(fresh.state), () -> gid(g) + ": a restored state writes other bytes");
    }
    replicas[g][r] = fresh;
    restores++;
  }

  /** Checks that the two replicas of a group have byte-identical snapshots. */
  void assertReplicasEqual(int g, String when) {
    byte[] a = snapshot(replicas[g][0].state);
    for (int r = 1; r < REPLICAS; r++) {
      assertArrayEquals(a, snapshot(replicas[g][r].state), () -> gid(g) + ": replicas differ " + when);
    }
  }

  /** A new leader for group g: its senders restart from the oldest unacknowledged item. */
  void changeLeader(int g) {
    leader[g] = (leader[g] + 1) % REPLICAS;
    for (int h = 0; h < n; h++) {
      if (h != g) {
        sent[g][h] = lead(g).channelPositions(gid(h))[0];
        lastAck[g][h] = -1;
        failAt[g][h] = Long.MAX_VALUE;
      }
    }
  }

  /** The (late) failure report of a lost batch or reply: the sender goes back to it. */
  boolean deliverFailure(int g, int h) {
    if (failAt[g][h] == Long.MAX_VALUE) {
      return false;
    }
    sent[g][h] = Math.min(sent[g][h], failAt[g][h]);
    lastAck[g][h] = -1;
    failAt[g][h] = Long.MAX_VALUE;
    return true;
  }

  /**
   * Ships one batch from g to h. With {@code faults}, the batch may resend old items, skip ahead
   * (a gap), carry a stale acknowledgement, or be lost, or its reply may be lost.
   *
   * @param ackOnly send an empty batch even if there is nothing new
   * @return true if a batch was sent
   */
  boolean ship(int g, int h, boolean faults, boolean ackOnly) {
    GroupState s = lead(g);
    long[] pos = s.channelPositions(gid(h));
    long first = pos[0];
    long next = pos[1];
    long ack = pos[2];
    long cur = Math.max(sent[g][h], first);
    long start = cur;
    if (faults) {
      int f = rnd.nextInt(10);
      if (f < 2 && cur > first) {
        start = first + rnd.nextInt((int) (cur - first));
        gapsAndDups++;
      } else if (f < 4 && cur + 1 < next) {
        // A gap: the batch at cur is lost (its failure is reported later) and a later one arrives.
        start = cur + 1 + rnd.nextInt((int) Math.min(3, next - cur - 1));
        failAt[g][h] = Math.min(failAt[g][h], cur);
        gapsAndDups++;
      }
      if (rnd.nextInt(8) == 0) {
        ack = ack == 0 ? 0 : rnd.nextInt((int) Math.min(ack + 1, Integer.MAX_VALUE));
      }
    }
    List<Object> items = start < next ? s.outboxRange(gid(h), start, 1 + rnd.nextInt(8)) : List.of();
    if (items.isEmpty() && !ackOnly) {
      return false;
    }
    long firstSeq = items.isEmpty() ? next : start;
    long end = firstSeq + items.size();
    ChannelBatch b = new ChannelBatch(gid(g), firstSeq, items.toArray(), ack);
    sent[g][h] = Math.max(cur, end);
    lastAck[g][h] = Math.max(lastAck[g][h], ack);
    boolean lostBatch = faults && rnd.nextInt(15) == 0;
    boolean lostReply = faults && !lostBatch && rnd.nextInt(15) == 0;
    if (lostBatch || lostReply) {
      batchesLost++;
      failAt[g][h] = Math.min(failAt[g][h], firstSeq);
    }
    if (!lostBatch) {
      long receiverNextIn = apply(h, b);
      long[] back = lead(h).channelPositions(gid(g));
      assertEquals(back[2], receiverNextIn, "a channel batch returns the receiver's next expected seq");
      if (receiverNextIn < first) {
        fail(gid(h) + " expects seq " + receiverNextIn + " from " + gid(g) + ", below the oldest kept " + first);
      }
      if (!lostReply && receiverNextIn >= 0 && receiverNextIn < end && receiverNextIn < sent[g][h]) {
        sent[g][h] = receiverNextIn;
      }
    }
    return true;
  }

  /**
   * Ships, without faults, until no channel has anything to send or acknowledge. Returns false
   * if that did not happen within {@code maxRounds} rounds.
   */
  boolean drain(int maxRounds, Runnable flushStarts) {
    for (int round = 0; round < maxRounds; round++) {
      flushStarts.run();
      boolean progress = false;
      for (int g = 0; g < n; g++) {
        for (int h = 0; h < n; h++) {
          if (g == h) {
            continue;
          }
          progress |= deliverFailure(g, h);
          long[] pos = lead(g).channelPositions(gid(h));
          boolean owesAck = pos[2] > lastAck[g][h];
          boolean hasItems = Math.max(sent[g][h], pos[0]) < pos[1];
          if (hasItems || owesAck) {
            ship(g, h, false, true);
            progress = true;
          }
        }
      }
      if (!progress) {
        return true;
      }
    }
    return false;
  }

  /** Describes what is still in flight (for failure messages). */
  String describe() {
    StringBuilder b = new StringBuilder();
    for (int g = 0; g < n; g++) {
      GroupState s = lead(g);
      b.append("\n  ").append(gid(g)).append(": clock=").append(s.order.clock).append(" pending=").append(s.order.pending.size())
          .append(" undecided=").append(s.order.undecided.size()).append(" queue=").append(s.exec.queue.size())
          .append(" parkedOn=").append(s.exec.parkedOn).append(" head=")
          .append(s.exec.queue.isEmpty() ? null : s.exec.queue.peek().start.id())
          .append(" inboxes=").append(s.exec.inboxes.size()).append(" awaitingStarts=").append(s.exec.replies.awaitingStarts.size());
      if (!s.order.undecided.isEmpty()) {
        Msg m = s.order.undecided.first();
        b.append(" firstUndecided=").append(m.start.id()).append(" dests=").append(Arrays.toString(m.start.dests()))
            .append(" proposals=").append(m.proposals);
      }
      for (int h = 0; h < n; h++) {
        if (h != g) {
          b.append("\n    ->").append(gid(h)).append(" ").append(Arrays.toString(s.channelPositions(gid(h))))
              .append(" sent=").append(sent[g][h]);
        }
      }
    }
    return b.toString();
  }

  /** Asserts that nothing is pending, queued, parked, buffered or unacknowledged anywhere. */
  void assertQuiescent(Consumer<String> failWith) {
    for (int g = 0; g < n; g++) {
      for (int r = 0; r < REPLICAS; r++) {
        GroupState s = replicas[g][r].state;
        if (!s.order.pending.isEmpty() || !s.exec.queue.isEmpty() || s.exec.parkedOn != null || s.exec.headStarted
            || !s.exec.replies.awaitingStarts.isEmpty() || !s.exec.inboxes.isEmpty()) {
          failWith.accept("not quiescent at " + gid(g) + " replica " + r + ": pending=" + s.order.pending.keySet()
              + " queue=" + s.exec.queue.size() + " parkedOn=" + s.exec.parkedOn + " awaitingStarts="
              + s.exec.replies.awaitingStarts.keySet() + " inboxes=" + s.exec.inboxes.ids());
        }
        for (int h = 0; h < n; h++) {
          if (h == g) {
            continue;
          }
          long[] pos = s.channelPositions(gid(h));
          long[] back = replicas[h][0].state.channelPositions(gid(g));
          if (pos[0] != pos[1] || back[2] != pos[1]) {
            failWith.accept("channel " + gid(g) + "->" + gid(h) + " not drained: " + Arrays.toString(pos)
                + ", receiver expects " + back[2]);
          }
        }
      }
    }
  }
}
