package io.eyrie.multicast.internal.state;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.internal.Wire.ChannelBatch;
import io.eyrie.multicast.internal.Wire.Data;
import io.eyrie.multicast.internal.Wire.Propose;
import io.eyrie.multicast.internal.Wire.Start;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The replicated ends of one group's channels to every other group: per peer, the outbox of
 * items not yet acknowledged and the next sequence number expected from that peer. Kept apart
 * because the senders read it (positions and ranges) while everything else in the state is only
 * read by the apply thread; it also remembers which outboxes changed during one entry, so the
 * senders are woken once per entry.
 */
final class Outboxes {
  private static final Logger LOG = LoggerFactory.getLogger(Outboxes.class);

  /**
   * About how many bytes of items one channel batch carries at most (estimated; a single larger
   * item goes alone). Ratis refuses a log entry above its write byte limit, and a refused batch
   * would be resent identically for ever.
   */
  static final int MAX_BATCH_BYTES = 1 << 20;

  private final GroupId self;
  private final StateCounters stats;
  final TreeMap<GroupId, Channel> channels = new TreeMap<>();
  private final TreeSet<GroupId> dirty = new TreeSet<>();

  Outboxes(GroupId self, Collection<GroupId> known, StateCounters stats) {
    this.self = self;
    this.stats = stats;
    for (GroupId g : known) {
      if (!g.equals(self)) {
        channels.put(g, new Channel());
      }
    }
  }

  /** One channel's replicated positions. */
  static final class Channel {
    SeqQueue outbox = new SeqQueue(0);
    long nextIn;
  }

  /** Opens a channel to a group added to the running cluster (its positions start at 0). */
  void addPeer(GroupId g) {
    if (!g.equals(self)) {
      channels.putIfAbsent(g, new Channel());
    }
  }

  /** True if this group has a channel to {@code to}. */
  boolean has(GroupId to) {
    return channels.containsKey(to);
  }

  /** Appends an item to the outbox towards a group, and marks the outbox changed. */
  void send(GroupId to, Object item) {
    sendLazy(to, item);
    dirty.add(to);
  }

  /**
   * Appends an item that need not ship at once (design 4.3.1, rule 7: a {@code Decided}): the
   * outbox is not marked changed, so the channel sender is not woken; the node's ticker ships it
   * with the next item or when it has waited long enough.
   */
  void sendLazy(GroupId to, Object item) {
    Channel c = channels.get(to);
    if (c == null) {
      throw new IllegalArgumentException("no channel from " + self + " to " + to);
    }
    c.outbox.append(item);
    stats.itemsSent++;
  }

  /** Tells the listener which outboxes changed since the last call. */
  void flushChanged(StateListener listener) {
    if (!dirty.isEmpty()) {
      for (GroupId g : dirty) {
        listener.outboxChanged(g);
      }
      dirty.clear();
    }
  }

  /**
   * Takes a channel batch: trims the outbox towards the sender up to its acknowledgement and hands
   * each item that is next in sequence to {@code apply} (earlier ones are duplicates, later ones
   * wait for a resend).
   *
   * @return the next sequence number expected from the sender, or -1 for a batch from no peer
   */
  long receive(ChannelBatch b, BiConsumer<GroupId, Object> apply) {
    Channel c = b.from() == null ? null : channels.get(b.from());
    if (c == null || b.items() == null) {
      LOG.error("{}: dropping channel batch from unknown group {}", self, b.from());
      return -1;
    }
    if (b.ackForYou() > c.outbox.first() && b.ackForYou() <= c.outbox.next()) {
      c.outbox.trimBelow(b.ackForYou());
    }
    for (int i = 0; i < b.items().length; i++) {
      long seq = b.firstSeq() + i;
      if (seq == c.nextIn) {
        c.nextIn++;
        stats.itemsReceived++;
        apply.accept(b.from(), b.items()[i]);
      }
    }
    return c.nextIn;
  }

  /** Returns the channel positions towards a group: outbox first, outbox next, next expected in. */
  long[] positions(GroupId to) {
    Channel c = channels.get(to);
    return c == null ? null : new long[] {c.outbox.first(), c.outbox.next(), c.nextIn};
  }

  /**
   * Returns up to {@code max} outbox items towards a group from sequence number {@code from}, and
   * about {@link #MAX_BATCH_BYTES} at most (but at least one item if there is one).
   */
  List<Object> range(GroupId to, long from, int max) {
    Channel c = channels.get(to);
    if (c == null) {
      return List.of();
    }
    List<Object> items = c.outbox.range(from, max);
    long bytes = 0;
    for (int i = 0; i < items.size(); i++) {
      bytes += estimatedBytes(items.get(i));
      if (bytes > MAX_BATCH_BYTES && i > 0) {
        return items.subList(0, i);
      }
    }
    return items;
  }

  /** An upper estimate of an outbox item's encoded size. */
  static long estimatedBytes(Object item) {
    if (item instanceof Data d) {
      return 64 + (d.value() == null ? 0 : d.value().length);
    }
    if (item instanceof Propose p && p.start() != null) {
      Start s = p.start();
      return 128 + (s.payload() == null ? 0 : s.payload().length)
          + (s.dests() == null ? 0 : 16L * s.dests().length) + (s.replyGroup() == null ? 0 : 16);
    }
    return 64;
  }

  Set<GroupId> peers() {
    return Collections.unmodifiableSet(channels.keySet());
  }

  void describeTo(StringBuilder b) {
    for (var e : channels.entrySet()) {
      Channel c = e.getValue();
      b.append("  channel ").append(e.getKey()).append(": out first=").append(c.outbox.first()).append(" next=")
          .append(c.outbox.next()).append(" in next=").append(c.nextIn).append('\n');
    }
  }

  /** Writes every channel in peer order: position in, first kept item out, the kept items. */
  void writeTo(Output out, Codec codec) {
    out.writeVarInt(channels.size(), true);
    for (Map.Entry<GroupId, Channel> e : channels.entrySet()) {
      Channel c = e.getValue();
      out.writeString(e.getKey().name());
      out.writeVarLong(c.nextIn, true);
      out.writeVarLong(c.outbox.first(), true);
      List<Object> items = c.outbox.range(c.outbox.first(), Integer.MAX_VALUE);
      out.writeVarInt(items.size(), true);
      for (Object o : items) {
        codec.write(out, o);
      }
    }
  }

  /**
   * Replaces every channel with the snapshot's: a channel the constructor opened towards a group
   * the snapshot does not have is dropped, so the restored channels are the snapshot's whatever
   * this replica started knowing (review N1).
   */
  void readFrom(Input in, Codec codec) {
    channels.clear();
    dirty.clear();
    int n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      GroupId g = GroupId.valueOf(in.readString());
      Channel c = new Channel();
      channels.put(g, c);
      c.nextIn = in.readVarLong(true);
      c.outbox = new SeqQueue(in.readVarLong(true));
      int k = in.readVarInt(true);
      for (int j = 0; j < k; j++) {
        c.outbox.append(codec.read(in));
      }
    }
  }
}
