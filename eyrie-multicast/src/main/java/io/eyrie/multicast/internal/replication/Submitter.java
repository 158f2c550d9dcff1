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

  private final GroupId group;
  private final RaftClientHolder client;
  private final Codec codec;
  private final int maxInFlight;
  private final int maxBatch;
  private final BiConsumer<List<Wire.Start>, Throwable> onFailure;
  private final ArrayDeque<Wire.Start> queue = new ArrayDeque<>();
  private int inFlight;
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

  private void pump() {
    while (true) {
      List<Wire.Start> batch;
      synchronized (this) {
        if (closed || inFlight >= maxInFlight || queue.isEmpty()) {
          return;
        }
        batch = new ArrayList<>(Math.min(queue.size(), maxBatch));
        while (!queue.isEmpty() && batch.size() < maxBatch) {
          batch.add(queue.poll());
        }
        inFlight++;
        sending.add(batch);
      }
      send(batch);
    }
  }

  private void send(List<Wire.Start> batch) {
    byte[] bytes;
    try {
      bytes = codec.encode(new Wire.StartBatch(System.currentTimeMillis(), batch.toArray(new Wire.Start[0])));
    } catch (IllegalArgumentException e) {
      done(batch, e);
      return;
    }
    entries.incrementAndGet();
    starts.addAndGet(batch.size());
    client.send(Message.valueOf(UnsafeByteOperations.unsafeWrap(bytes))).whenComplete((reply, err) ->
        done(batch, err != null ? err : reply.isSuccess() ? null : reply.getException()));
  }

  private void done(List<Wire.Start> batch, Throwable failure) {
    synchronized (this) {
      inFlight--;
      sending.remove(batch);
    }
    if (failure != null) {
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
