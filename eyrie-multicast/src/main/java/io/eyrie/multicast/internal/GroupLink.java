package io.eyrie.multicast.internal;

import io.eyrie.multicast.Codec;
import io.eyrie.multicast.GroupId;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything a node sends to one group's log, in one stream: the client starts submitted here
 * for that group and the channel batches of every group this node leads towards it go out
 * together, one Ratis request (one log entry) each, with a window of requests in flight. What
 * accumulates while the window is full goes out in the next request.
 *
 * <p>Why: a log entry costs the same CPU whether it carries one item or hundreds (the Ratis
 * request, the replication to two followers, the applies). Sent separately, a node's starts to
 * a group and each of its led groups' channel batches to it are separate streams, each with its
 * own entry per round; bundled, they share one. Applying a {@link Wire.Bundle} applies its
 * parts one after the other, as if they had been separate entries in that order, so nothing
 * about the protocol changes: a channel batch is applied by sequence number whoever carries it.
 */
final class GroupLink implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(GroupLink.class);

  private final GroupId group;
  private final RaftClientHolder client;
  private final Codec codec;
  private final int window;
  private final int maxStarts;
  private final BiConsumer<List<Wire.Start>, Throwable> onStartFailure;
  private final Runnable retrySoon;
  private final List<ChannelSender> senders = new CopyOnWriteArrayList<>();
  private final ArrayDeque<Wire.Start> queue = new ArrayDeque<>();
  /** Entries other nodes relayed to this one, the group's leader, for its next request. */
  private final ArrayDeque<Relayed> relayedQueue = new ArrayDeque<>();

  /** Hands an entry to the node that leads the group, or returns null to write it here. */
  interface Relayer {
    CompletableFuture<byte[]> relay(GroupId group, Object entry);
  }

  /**
   * With relays on (not null): one request in flight in all (not one for starts and more for
   * channel batches), and when this node does not lead the group, requests are relayed to the
   * node that does, which puts them into its own next entry.
   */
  private final Relayer relayer;

  /** A relayed entry's parts and the answer owed to the node that relayed it. */
  private record Relayed(List<Wire.Start> starts, List<Wire.ChannelBatch> batches, CompletableFuture<byte[]> answer) {}
  /** The starts sent and not yet answered (for diagnosis). */
  private final Set<List<Wire.Start>> sending = Collections.newSetFromMap(new IdentityHashMap<>());
  /** Requests in flight that carry starts (at most {@link #window}), and those that carry only channel batches. */
  /**
   * Set when a sender may have something to send (its outbox changed, its group's leadership
   * changed, one of its batches came back or was skipped as busy): only then are the senders
   * asked, so a client's submission does not touch the led groups' state locks for nothing.
   */
  private final java.util.concurrent.atomic.AtomicBoolean channelsDirty = new java.util.concurrent.atomic.AtomicBoolean(true);
  private int startsInFlight;
  private int channelOnlyInFlight;
  private boolean closed;
  /** Ratis requests sent (each one log entry). */
  final AtomicLong requests = new AtomicLong();
  /** Requests relayed to the leader's node (not log entries of their own), and those it answered. */
  final AtomicLong relays = new AtomicLong();
  final AtomicLong relaysAnswered = new AtomicLong();
  /** Requests that carried starts, and the starts they carried. */
  final AtomicLong startEntries = new AtomicLong();
  final AtomicLong starts = new AtomicLong();
  /** Encoded bytes of the requests that carried channel batches. */
  final AtomicLong channelBytes = new AtomicLong();

  GroupLink(GroupId group, RaftClientHolder client, Codec codec, int window, int maxStarts,
      BiConsumer<List<Wire.Start>, Throwable> onStartFailure, Runnable retrySoon) {
    this(group, client, codec, window, maxStarts, onStartFailure, retrySoon, null);
  }

  /** With a relayer: one request in flight, relayed to the leader's node when that is another one. */
  GroupLink(GroupId group, RaftClientHolder client, Codec codec, int window, int maxStarts,
      BiConsumer<List<Wire.Start>, Throwable> onStartFailure, Runnable retrySoon, Relayer relayer) {
    this.group = group;
    this.relayer = relayer;
    this.retrySoon = retrySoon;
    this.client = client;
    this.codec = codec;
    this.window = window;
    this.maxStarts = maxStarts;
    this.onStartFailure = onStartFailure;
  }

  GroupId group() {
    return group;
  }

  /** Adds the channel sender of a local group towards this link's group. */
  void add(ChannelSender s) {
    if (!s.to().equals(group)) {
      throw new IllegalArgumentException("sender to " + s.to() + " on the link to " + group);
    }
    senders.add(s);
  }

  List<ChannelSender> senders() {
    return senders;
  }

  /** Says that a sender of this link may have something to send. */
  void channelsChanged() {
    channelsDirty.set(true);
  }

  /** Queues a client start for this group and sends what the window allows. */
  void submit(Wire.Start s) {
    synchronized (this) {
      if (closed) {
        onStartFailure.accept(List.of(s), new IllegalStateException("node is closing"));
        return;
      }
      queue.add(s);
    }
    pump(false);
  }

  /**
   * Takes an entry another node relayed to this one (this node leads the group): its starts and
   * channel batches go out with this link's next request, and the answer is what the entry itself
   * would have been answered (8 bytes per channel batch, in order: the group's next expected
   * sequence number from that batch's sender), once that request is applied.
   */
  CompletableFuture<byte[]> relayed(Object entry) {
    List<Wire.Start> starts = new ArrayList<>();
    List<Wire.ChannelBatch> batches = new ArrayList<>();
    if (entry instanceof Wire.StartBatch sb) {
      starts.addAll(List.of(sb.starts()));
    } else if (entry instanceof Wire.ChannelBatch cb) {
      batches.add(cb);
    } else if (entry instanceof Wire.Bundle b) {
      if (b.starts() != null) {
        starts.addAll(List.of(b.starts().starts()));
      }
      batches.addAll(List.of(b.batches()));
    } else {
      return CompletableFuture.failedFuture(new IllegalArgumentException("not an entry: "
          + (entry == null ? "null" : entry.getClass().getSimpleName())));
    }
    CompletableFuture<byte[]> answer = new CompletableFuture<>();
    synchronized (this) {
      if (closed) {
        return CompletableFuture.failedFuture(new IllegalStateException("node is closing"));
      }
      relayedQueue.add(new Relayed(starts, batches, answer));
    }
    pump(false);
    return answer;
  }

  /**
   * Sends what the windows allow: the queued starts and every sender's next batch, together.
   * Starts keep the submission window ({@code window} requests carrying starts in flight, one by
   * default: what accumulates meanwhile goes out in the next entry, which is where a group's
   * throughput comes from). Channel batches never wait for another request: what is ready goes with
   * the next start request if that window is free, or else at once in a request of channel batches
   * alone (each sender keeps its own window of batches in flight, as when each channel had its own
   * stream; ready batches of several channels share one entry).
   * On a tick, senders may add bare acknowledgements that are due. Never waits for a local
   * group's state (any thread may pump: a client's submission, a reply, the node's ticker): a
   * sender whose group is applying an entry is skipped and handed to the node's channel thread,
   * which waits for the lock ({@link #pump(boolean, boolean)}).
   */
  void pump(boolean tick) {
    pump(tick, false);
  }

  /**
   * Like {@link #pump(boolean)}; with {@code wait} true, asks the senders even if that means
   * waiting for a local group's state lock (for the node's channel thread only, which is there to
   * wait: a sender found busy by a pump that may not wait is handed to it).
   */
  void pump(boolean tick, boolean wait) {
    while (true) {
      List<Wire.Start> batch;
      List<Relayed> rel;
      boolean withStarts;
      synchronized (this) {
        if (closed) {
          return;
        }
        if (relayer != null && startsInFlight + channelOnlyInFlight >= window) {
          return; // one stream: what comes meanwhile goes in the next request
        }
        withStarts = startsInFlight < window && !queue.isEmpty();
        if (!withStarts && relayedQueue.isEmpty() && !channelsDirty.get() && !tick) {
          return;
        }
        batch = new ArrayList<>(withStarts ? Math.min(queue.size(), maxStarts) : 0);
        while (withStarts && !queue.isEmpty() && batch.size() < maxStarts) {
          batch.add(queue.poll());
        }
        // Relayed entries join up to the start limit (at least one goes), the rest wait.
        rel = new ArrayList<>();
        int count = batch.size();
        while (!relayedQueue.isEmpty() && (rel.isEmpty() || count + relayedQueue.peek().starts().size() <= maxStarts)) {
          Relayed r = relayedQueue.poll();
          count += r.starts().size();
          rel.add(r);
        }
        // Reserved while the senders are asked.
        if (withStarts) {
          startsInFlight++;
          sending.add(batch);
        } else {
          channelOnlyInFlight++;
        }
      }
      List<ChannelSender.Prepared> parts = new ArrayList<>(2);
      boolean busy = false;
      boolean ask = tick || channelsDirty.getAndSet(false);
      for (ChannelSender s : ask ? senders : List.<ChannelSender>of()) {
        ChannelSender.Prepared p = s.prepare(tick, wait);
        if (p == ChannelSender.BUSY) {
          busy = true;
        } else if (p != null) {
          parts.add(p);
        }
      }
      if (busy) {
        channelsDirty.set(true);
        retrySoon.run();
      }
      if (batch.isEmpty() && parts.isEmpty() && rel.isEmpty()) {
        synchronized (this) {
          channelOnlyInFlight--;
        }
        return;
      }
      send(batch, parts, rel);
    }
  }

  private void send(List<Wire.Start> batch, List<ChannelSender.Prepared> parts, List<Relayed> rel) {
    List<Wire.Start> starts = batch;
    List<Wire.ChannelBatch> cbs = new ArrayList<>(parts.size());
    for (ChannelSender.Prepared p : parts) {
      cbs.add(p.batch());
    }
    if (!rel.isEmpty()) {
      starts = new ArrayList<>(batch);
      for (Relayed r : rel) {
        starts.addAll(r.starts());
        cbs.addAll(r.batches());
      }
    }
    Object entry;
    Wire.StartBatch sb = starts.isEmpty() ? null
        : new Wire.StartBatch(System.currentTimeMillis(), starts.toArray(new Wire.Start[0]));
    if (cbs.isEmpty()) {
      entry = sb;
    } else if (sb == null && cbs.size() == 1) {
      entry = cbs.get(0);
    } else {
      entry = new Wire.Bundle(sb, cbs.toArray(new Wire.ChannelBatch[0]));
    }
    // What other nodes relayed here is never relayed on (two nodes with stale views of the
    // leader could pass it back and forth): it is written from here.
    CompletableFuture<byte[]> relayed = null;
    if (relayer != null && rel.isEmpty() && !client.leadsLocally()) {
      try {
        relayed = relayer.relay(group, entry);
      } catch (RuntimeException e) {
        LOG.debug("relaying to {} failed at once ({}); writing directly", group, e.toString());
      }
    }
    if (relayed != null) {
      relays.incrementAndGet();
      List<Wire.Start> all = starts;
      relayed.whenComplete((body, err) -> {
        boolean closing;
        synchronized (this) {
          closing = closed;
        }
        if (err == null) {
          relaysAnswered.incrementAndGet();
          done(batch, parts, rel, ByteBuffer.wrap(body), null);
        } else if (closing) {
          done(batch, parts, rel, null, err); // the node is closing: no new writes
        } else {
          // The leader moved, the connection failed or the answer is late: write it ourselves.
          LOG.debug("relaying to {} failed ({}); writing directly", group, err.toString());
          write(batch, parts, rel, all, cbs, entry);
        }
      });
      return;
    }
    write(batch, parts, rel, starts, cbs, entry);
  }

  /** Writes the entry to the group's log: to the local replica if it leads, else through the Ratis client. */
  private void write(List<Wire.Start> batch, List<ChannelSender.Prepared> parts, List<Relayed> rel,
      List<Wire.Start> starts, List<Wire.ChannelBatch> cbs, Object entry) {
    byte[] bytes;
    try {
      bytes = codec.encode(entry);
    } catch (RuntimeException e) {
      // Items and starts were encodable on their own (items are encoded when they enter the
      // outbox, starts when the client sent them), so this should not happen; if it does, the
      // outcome is a failed request, never a stuck window.
      done(batch, parts, rel, null, e);
      return;
    }
    requests.incrementAndGet();
    if (!starts.isEmpty()) {
      startEntries.incrementAndGet();
      this.starts.addAndGet(starts.size());
    }
    if (!cbs.isEmpty()) {
      channelBytes.addAndGet(bytes.length);
    }
    client.send(Message.valueOf(UnsafeByteOperations.unsafeWrap(bytes))).whenComplete((reply, err) -> {
      Throwable failure = err != null ? err : reply.isSuccess() ? null : reply.getException();
      if (failure != null) {
        done(batch, parts, rel, null, failure);
      } else {
        done(batch, parts, rel, reply.getMessage().getContent().asReadOnlyByteBuffer(), null);
      }
    });
  }

  /**
   * Reports a request's outcome to its parts. The reply holds, for each channel batch in the
   * order sent, the receiver's next expected sequence number from that batch's sender (8 bytes
   * each; a lone start batch's reply is not read).
   */
  private void done(List<Wire.Start> batch, List<ChannelSender.Prepared> parts, List<Relayed> rel, ByteBuffer reply,
      Throwable failure) {
    synchronized (this) {
      if (batch.isEmpty()) {
        channelOnlyInFlight--;
      } else {
        startsInFlight--;
        sending.remove(batch);
      }
    }
    if (!parts.isEmpty()) {
      channelsDirty.set(true); // their senders may have more
    }
    for (ChannelSender.Prepared p : parts) {
      if (failure != null) {
        p.sender().failed(p.batch(), p.epoch(), failure);
      } else {
        p.sender().complete(p.batch(), p.epoch(), reply.remaining() >= 8 ? reply.getLong() : -1);
      }
    }
    for (Relayed r : rel) {
      if (failure != null) {
        r.answer().completeExceptionally(failure);
      } else {
        ByteBuffer answer = ByteBuffer.allocate(8 * r.batches().size());
        for (int i = 0; i < r.batches().size(); i++) {
          answer.putLong(reply.remaining() >= 8 ? reply.getLong() : -1);
        }
        r.answer().complete(answer.array());
      }
    }
    if (failure != null && !batch.isEmpty()) {
      LOG.debug("submitting {} starts to {} failed: {}", batch.size(), group, failure.toString());
      onStartFailure.accept(batch, failure);
    }
    pump(false);
  }

  /** Describes the link's state for diagnosis. */
  synchronized String describe() {
    return "link to " + group + ": queued=" + queue.size() + " relayed=" + relayedQueue.size() + " inFlight="
        + startsInFlight + "+" + channelOnlyInFlight + " requests=" + requests.get() + " relays=" + relays.get() + " answered=" + relaysAnswered.get()
        + " senders=" + senders.size();
  }

  /** Says whether a message waits here or is being sent (for diagnosis), or null if neither. */
  synchronized String describe(io.eyrie.multicast.MsgId id) {
    for (Wire.Start s : queue) {
      if (s.id().equals(id)) {
        return "link to " + group + ": queued";
      }
    }
    for (List<Wire.Start> b : sending) {
      for (Wire.Start s : b) {
        if (s.id().equals(id)) {
          return "link to " + group + ": in flight";
        }
      }
    }
    return null;
  }

  @Override
  public void close() {
    List<Wire.Start> dropped;
    List<Relayed> rel;
    synchronized (this) {
      closed = true;
      dropped = new ArrayList<>(queue);
      queue.clear();
      rel = new ArrayList<>(relayedQueue);
      relayedQueue.clear();
    }
    rel.forEach(r -> r.answer().completeExceptionally(new IllegalStateException("node is closing")));
    if (!dropped.isEmpty()) {
      onStartFailure.accept(dropped, new IllegalStateException("node is closing"));
    }
  }
}
