package io.eyrie.multicast.internal.replication;

import io.eyrie.multicast.Codec;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.internal.Wire;
import io.eyrie.multicast.internal.state.GroupState;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ships one group channel (from a local group replica to another group) while the local
 * replica leads its group: batches of outbox items, a bounded window in flight, go-back-N to
 * the receiver's next expected sequence number, and empty batches that only acknowledge.
 *
 * <p>Correctness does not depend on who sends: items are read from applied (committed) state,
 * and the receiver applies each sequence number once. Leadership only avoids waste.
 */
final class ChannelSender {
  private static final Logger LOG = LoggerFactory.getLogger(ChannelSender.class);

  /**
   * Reads the local replica's state under its lock. A seam for tests, which apply entries
   * between reads as the Ratis apply thread may.
   */
  interface StateReader {
    <T> T read(Function<GroupState, T> f);
  }

  private final StateReader sm;
  private final GroupId from;
  private final GroupId to;
  private final RaftClientHolder client;
  private final Codec codec;
  private final int window;
  private final int maxItems;

  // Read without the lock: the apply thread asks while holding the state lock, and pump()
  // takes this lock before the state lock, so locking here could deadlock.
  private volatile boolean active;
  private long epoch;
  private long sent;
  private long lastAckSent = -1;
  private int inFlight;
  private long retryAfterNanos;
  private long lastAckNanos;

  /**
   * A bare acknowledgement (an empty batch) only lets the other group trim its outbox towards
   * this one, and it costs a log entry there and, with a window of one, holds back the next data
   * batch for a consensus round. Data batches carry acknowledgements for free, so a bare one goes
   * only when the unacknowledged items are many or old.
   */
  static final long BARE_ACK_ITEMS = 1024;
  static final long BARE_ACK_INTERVAL_NANOS = 250_000_000L;

  /** How long acknowledgement-only items (Decided) may wait for company, and how many may. */
  static final long LAZY_NANOS = 250_000_000L;
  static final long LAZY_ITEMS = 1024;
  /** When the sender first saw acknowledgement-only items waiting, or 0. */
  private long lazySince;

  private static boolean lazyOnly(List<Object> items) {
    if (items.isEmpty()) {
      return false;
    }
    for (Object o : items) {
      if (!(o instanceof Wire.Decided)) {
        return false;
      }
    }
    return true;
  }

  private boolean ackDue(long nextIn) {
    return lastAckSent < 0 || nextIn - lastAckSent >= BARE_ACK_ITEMS
        || System.nanoTime() - lastAckNanos >= BARE_ACK_INTERVAL_NANOS;
  }
  final AtomicLong batches = new AtomicLong();
  final AtomicLong items = new AtomicLong();
  final AtomicLong bytes = new AtomicLong();

  ChannelSender(GroupStateMachine sm, GroupId to, RaftClientHolder client, Codec codec, int window, int maxItems) {
    this(sm::read, sm.group(), to, client, codec, window, maxItems);
  }

  ChannelSender(StateReader sm, GroupId from, GroupId to, RaftClientHolder client, Codec codec, int window,
      int maxItems) {
    this.sm = sm;
    this.from = from;
    this.to = to;
    this.client = client;
    this.codec = codec;
    this.window = window;
    this.maxItems = maxItems;
  }

  /** Channel positions (first, next, nextIn) and the items from {@code start}, read in one step. */
  private record View(long[] pos, long start, List<Object> items) {}

  /** The receiving group. */
  GroupId to() {
    return to;
  }

  boolean isActive() {
    return active;
  }

  /**
   * Returns how many items of this channel's outbox the receiver has not acknowledged yet (the
   * channel's backlog). Not synchronized: it only reads the replica's state under its lock.
   */
  long backlog() {
    long[] p = sm.read(s -> s.channelPositions(to));
    return p == null ? 0 : Math.max(0, p[1] - p[0]);
  }

  /** Describes the sender's state for diagnosis. */
  synchronized String describe() {
    return from + "->" + to + ": active=" + active + " epoch=" + epoch + " sent=" + sent + " inFlight=" + inFlight
        + " lastAckSent=" + lastAckSent + " batches=" + batches.get();
  }

  /** Starts sending from the oldest item not yet acknowledged (on becoming leader). */
  synchronized void activate() {
    if (active) {
      return;
    }
    long[] p = sm.read(s -> s.channelPositions(to));
    if (p == null) {
      return; // a group added to the cluster that this replica has not learned of yet
    }
    active = true;
    epoch++;
    sent = p[0];
    inFlight = 0;
    lastAckSent = -1;
    retryAfterNanos = 0;
    LOG.debug("{}->{}: sending from {}", from, to, sent);
  }

  synchronized void deactivate() {
    if (active) {
      active = false;
      epoch++;
    }
  }

  /** A batch taken for sending, with the sender's epoch when it was taken. */
  private record Prepared(Wire.ChannelBatch batch, long epoch) {}

  /**
   * Sends what the window allows, through this channel's own Ratis client. On a tick, also sends
   * a bare acknowledgement if the receiver has not yet been told how far this group has applied
   * its items and the news is due ({@link #BARE_ACK_ITEMS}, {@link #BARE_ACK_INTERVAL_NANOS}).
   */
  void pump(boolean tick) {
    Prepared p;
    while ((p = prepare(tick)) != null) {
      send(p.batch(), p.epoch());
    }
  }

  /**
   * Takes the next batch the window allows and counts it in flight, or returns null if there is
   * nothing to send (or no room). The caller sends it and reports the outcome through
   * {@link #complete} or {@link #failed}.
   */
  private Prepared prepare(boolean tick) {
    synchronized (this) {
      if (!active || inFlight >= window || System.nanoTime() < retryAfterNanos) {
        return null;
      }
      // Positions and items are read in one step: the apply thread trims the outbox on an
      // acknowledgement, and items read after a trim must not be labelled with the trimmed
      // numbers (the receiver applies items by label, so it would lose some and repeat others).
      long floor = sent;
      Function<GroupState, View> read = s -> {
        long[] p = s.channelPositions(to);
        if (p == null) {
          return null; // an installed snapshot predates the group's addition
        }
        long start = Math.max(floor, p[0]);
        return new View(p, start, start < p[1] ? s.outboxRange(to, start, maxItems) : List.of());
      };
      View view = sm.read(read);
      if (view == null) {
        return null;
      }
      long next = view.pos[1];
      long nextIn = view.pos[2];
      sent = view.start;
      Wire.ChannelBatch batch;
      if (tick && lazyOnly(view.items)) {
        // Only decisions' acknowledgements (design 4.3.1, rule 7): shipped once the oldest has
        // waited LAZY_NANOS or there are many, so that messages close together share an entry.
        long now = System.nanoTime();
        if (lazySince == 0) {
          lazySince = now;
        }
        if (now - lazySince < LAZY_NANOS && next - view.start < LAZY_ITEMS) {
          return null;
        }
      }
      if (!view.items.isEmpty()) {
        lazySince = 0;
        batch = new Wire.ChannelBatch(from, view.start, view.items.toArray(), nextIn);
        sent = view.start + view.items.size();
      } else if (tick && inFlight == 0 && nextIn > lastAckSent && ackDue(nextIn)) {
        batch = new Wire.ChannelBatch(from, next, new Object[0], nextIn);
      } else {
        return null;
      }
      lastAckSent = Math.max(lastAckSent, nextIn);
      lastAckNanos = System.nanoTime();
      inFlight++;
      batches.incrementAndGet();
      items.addAndGet(batch.items().length);
      return new Prepared(batch, epoch);
    }
  }

  private void send(Wire.ChannelBatch batch, long myEpoch) {
    try {
      // Inside the try: a batch that cannot be encoded must go through failed(), or inFlight
      // would never come down and the channel would stop (review F6). Items are encoded when they
      // enter the outbox, so this should not fail.
      byte[] data = codec.encode(batch);
      bytes.addAndGet(data.length);
      client.send(Message.valueOf(UnsafeByteOperations.unsafeWrap(data))).whenComplete((reply, err) -> {
        if (err == null && reply.isSuccess()) {
          ByteBuffer b = reply.getMessage().getContent().asReadOnlyByteBuffer();
          complete(batch, myEpoch, b.remaining() >= 8 ? b.getLong() : -1);
          pump(false);
        } else {
          failed(batch, myEpoch, err != null ? err : reply.getException());
        }
      });
    } catch (RuntimeException e) {
      failed(batch, myEpoch, e);
    }
  }

  /** A prepared batch was applied by the receiver, whose next expected number is {@code receiverNextIn}. */
  void complete(Wire.ChannelBatch batch, long myEpoch, long receiverNextIn) {
    synchronized (this) {
      if (myEpoch != epoch) {
        return;
      }
      inFlight--;
      long end = batch.firstSeq() + batch.items().length;
      if (receiverNextIn >= 0 && receiverNextIn < end && receiverNextIn < sent) {
        // The receiver skipped part of this batch (a gap after a lost batch): go back.
        sent = receiverNextIn;
      } else if (receiverNextIn > sent) {
        // The receiver already has more (sent by an earlier leader, or by a batch reported as
        // failed that was committed): skip what it has instead of resending it.
        sent = receiverNextIn;
      }
    }
  }

  /** A prepared batch could not be sent or was refused: resend from it after a pause. */
  void failed(Wire.ChannelBatch batch, long myEpoch, Throwable t) {
    synchronized (this) {
      if (myEpoch != epoch) {
        return;
      }
      inFlight--;
      LOG.debug("{}->{}: batch at {} failed: {}", from, to, batch.firstSeq(), String.valueOf(t));
      // Resend everything from this batch on; the receiver drops what it already applied.
      sent = Math.min(sent, batch.firstSeq());
      lastAckSent = -1;
      retryAfterNanos = System.nanoTime() + 50_000_000L;
    }
  }
}
