package io.eyrie.multicast.internal.replication;

import io.eyrie.multicast.Codec;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.internal.Wire;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Submits client starts to one group's log, many per entry: while the window of in-flight
 * entries is full, starts queue up and go out together in the next entry. Under light load a
 * start goes out at once; under heavy load entries grow, which is where throughput comes from.
 */
final class Submitter implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Submitter.class);

  /**
   * About the most payload bytes of starts one entry carries (but at least one start): with a
   * client frame of at most 4 MiB, an entry stays far below the Raft port's frame limit
   * ({@code RaftFrameLimit}).
   */
  static final long MAX_BATCH_PAYLOAD_BYTES = 1 << 20;

  private final GroupId group;
  private final RaftClientHolder client;
  private final Codec codec;
  private final int maxInFlight;
  private final int maxBatch;
  private final BiConsumer<List<Wire.Start>, Throwable> onFailure;
  private final ArrayDeque<Wire.Start> queue = new ArrayDeque<>();
  /** Decisions and forwards of this node's leading replica (design 4.3.1), for the next entry. */
  private final java.util.LinkedHashMap<io.eyrie.multicast.MsgId, Wire.Decision> decides = new java.util.LinkedHashMap<>();
  private final java.util.LinkedHashMap<io.eyrie.multicast.MsgId, Wire.Forward> forwards = new java.util.LinkedHashMap<>();
  private int inFlight;
  /** Whether an entry carrying decisions or forwards is in flight (one at a time, see {@link #pump}). */
  private boolean decisionsInFlight;
  /** The batches sent and not yet answered (for diagnosis). */
  private final java.util.Set<List<Wire.Start>> sending = java.util.Collections.newSetFromMap(
      new java.util.IdentityHashMap<>());
  private boolean closed;
  final AtomicLong entries = new AtomicLong();
  final AtomicLong starts = new AtomicLong();

  Submitter(GroupId group, RaftClientHolder client, Codec codec, int maxInFlight, int maxBatch,
      BiConsumer<List<Wire.Start>, Throwable> onFailure) {
    this.group = group;
    this.client = client;
    this.codec = codec;
    this.maxInFlight = maxInFlight;
    this.maxBatch = maxBatch;
    this.onFailure = onFailure;
  }

  /** Describes the submitter's state for diagnosis. */
  synchronized String describe() {
    return "submitter " + group + ": queued=" + queue.size() + " inFlight=" + inFlight + " entries=" + entries.get();
  }

  /** Says whether a message waits here or is being sent (for diagnosis), or null if neither. */
  synchronized String describe(io.eyrie.multicast.MsgId id) {
    for (Wire.Start s : queue) {
      if (s.id().equals(id)) {
        return "submitter " + group + ": queued";
      }
    }
    for (List<Wire.Start> b : sending) {
      for (Wire.Start s : b) {
        if (s.id().equals(id)) {
          return "submitter " + group + ": in flight";
        }
      }
    }
    return null;
  }

  /** Appends a decision with the next entry (or alone, bypassing the window, if none is due). */
  void decide(Wire.Decision d) {
    synchronized (this) {
      if (closed) {
        return;
      }
      decides.put(d.id(), d);
    }
    pump();
  }

  /** Appends a forward with the next entry. */
  void forward(Wire.Forward f) {
    synchronized (this) {
      if (closed) {
        return;
      }
      forwards.put(f.id(), f);
    }
    pump();
  }

  void submit(Wire.Start s) {
    synchronized (this) {
      if (closed) {
        onFailure.accept(List.of(s), new IllegalStateException("node is closing"));
        return;
      }
      queue.add(s);
    }
    pump();
  }

  /**
   * Sends what is due. Starts go as the window allows. Decisions and forwards go with the next
   * entry, but at most one entry carrying them is in flight at a time (it may bypass the window,
   * rule 5): under load the decisions made during one consensus round share the next entry,
   * instead of one entry each; alone, a decision goes at once.
   */
  private void pump() {
    while (true) {
      List<Wire.Start> batch;
      Wire.Decision[] ds;
      Wire.Forward[] fs;
      boolean counted;
      boolean carries;
      synchronized (this) {
        if (closed) {
          return;
        }
        boolean room = inFlight < maxInFlight;
        boolean startsDue = room && !queue.isEmpty();
        boolean othersDue = !decisionsInFlight && (!decides.isEmpty() || !forwards.isEmpty());
        if (!startsDue && !othersDue) {
          return;
        }
        batch = new ArrayList<>(Math.min(queue.size(), maxBatch));
        long bytes = 0;
        while (startsDue && !queue.isEmpty() && batch.size() < maxBatch
            && (batch.isEmpty() || bytes + queue.peek().payload().length <= MAX_BATCH_PAYLOAD_BYTES)) {
          Wire.Start next = queue.poll();
          bytes += next.payload().length;
          batch.add(next);
        }
        if (othersDue) {
          ds = decides.values().toArray(new Wire.Decision[0]);
          fs = forwards.values().toArray(new Wire.Forward[0]);
          decides.clear();
          forwards.clear();
          decisionsInFlight = true;
        } else {
          ds = new Wire.Decision[0];
          fs = new Wire.Forward[0];
        }
        carries = othersDue;
        counted = startsDue;
        if (counted) {
          inFlight++;
        }
        sending.add(batch);
      }
      send(batch, ds, fs, counted, carries);
    }
  }


  private void send(List<Wire.Start> batch, Wire.Decision[] ds, Wire.Forward[] fs, boolean counted,
      boolean carries) {
    byte[] bytes;
    try {
      // An entry without starts carries no time: decisions never move the log time (K12).
      bytes = codec.encode(new Wire.StartBatch(batch.isEmpty() ? -1 : System.currentTimeMillis(),
          batch.toArray(new Wire.Start[0]), ds, fs));
    } catch (IllegalArgumentException e) {
      done(batch, e, counted, carries);
      return;
    }
    entries.incrementAndGet();
    starts.addAndGet(batch.size());
    client.send(Message.valueOf(UnsafeByteOperations.unsafeWrap(bytes))).whenComplete((reply, err) ->
        done(batch, err != null ? err : reply.isSuccess() ? null : reply.getException(), counted, carries));
  }

  /**
   * A sent entry was answered. A lost decision or forward is not resent from here: the exchange
   * appends it again while the message stays undecided (rule 5, K1).
   */
  private void done(List<Wire.Start> batch, Throwable failure, boolean counted, boolean carries) {
    synchronized (this) {
      if (carries) {
        decisionsInFlight = false;
      }
      if (counted) {
        inFlight--;
      }
      sending.remove(batch);
    }
    if (failure != null && !batch.isEmpty()) {
      LOG.debug("submitting {} starts to {} failed: {}", batch.size(), group, failure.toString());
      onFailure.accept(batch, failure);
    }
    pump();
  }

  @Override
  public void close() {
    List<Wire.Start> dropped;
    synchronized (this) {
      closed = true;
      dropped = new ArrayList<>(queue);
      queue.clear();
    }
    if (!dropped.isEmpty()) {
      onFailure.accept(dropped, new IllegalStateException("node is closing"));
    }
  }
}
