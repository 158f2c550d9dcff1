package io.eyrie.multicast.internal.state;

import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.Wire;
import io.eyrie.multicast.internal.Wire.Data;
import io.eyrie.multicast.internal.state.Inboxes.Inbox;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * What the application sees of the message at the head of an {@link ExecutionQueue}: the
 * message, the log time, the items other destinations sent, and a way to send items to them.
 */
final class ExecutionCtx implements ExecutionContext {
  /** The last array {@link #sendEncoded} found to decode (a context serves one invocation). */
  private byte[] checked;
  private final ExecutionQueue q;
  private final Msg m;
  private List<GroupId> dests;

  ExecutionCtx(ExecutionQueue q, Msg m) {
    this.q = q;
    this.m = m;
  }

  @Override
  public MsgId id() {
    return m.start.id();
  }

  @Override
  public List<GroupId> dests() {
    if (dests == null) {
      dests = List.of(m.start.dests());
    }
    return dests;
  }

  @Override
  public GroupId replyGroup() {
    return m.start.replyGroup();
  }

  @Override
  public GroupId group() {
    return q.self;
  }

  /** The message as delivered. */
  Wire.Start start() {
    return m.start;
  }

  @Override
  public byte[] payloadBytes() {
    return m.start.payload();
  }

  @Override
  public List<GroupId> partitions() {
    return q.partitions.get();
  }

  @Override
  public List<GroupId> openPartitions() {
    return q.openPartitions.get();
  }

  @Override
  public Object payload() {
    return q.codec.decode(m.start.payload());
  }

  @Override
  public long logTime() {
    return q.clients.logTime();
  }

  @Override
  public void send(GroupId to, Object item) {
    checkDestination(to);
    // Encoded now, on the apply thread: an item that cannot be encoded fails here, as an
    // IllegalArgumentException that makes the message's execution an error reply (the same on
    // every replica), instead of entering the outbox and wedging the channel (review F6).
    enqueue(to, q.codec.encode(item));
  }

  @Override
  public void sendEncoded(GroupId to, byte[] encoded) {
    checkDestination(to);
    if (encoded != checked) {
      // What the receivers will read, decoded here: bytes that do not decode fail on this apply
      // thread, the same at every replica, instead of at the receivers only. Once per array: the
      // same bytes sent to several groups are checked once.
      try {
        q.codec.decode(encoded);
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("the bytes for " + to + " do not decode: " + e.getMessage(), e);
      }
      checked = encoded;
    }
    enqueue(to, encoded);
  }

  private void checkDestination(GroupId to) {
    if (to == null || to.equals(q.self) || !q.outboxes.has(to)) {
      throw new IllegalArgumentException("cannot send to " + to + " from " + q.self);
    }
  }

  private void enqueue(GroupId to, byte[] bytes) {
    if (bytes.length > MAX_ITEM_BYTES) {
      // Refused here, on the apply thread, the same at every replica: an entry larger than Ratis
      // sends would stall the channel for ever (review N6).
      throw new IllegalArgumentException("an item of " + bytes.length + " bytes for " + to
          + " is larger than a channel takes (" + MAX_ITEM_BYTES + " bytes)");
    }
    q.sends++;
    q.outboxes.send(to, new Data(m.start.id(), bytes));
  }

  @Override
  public List<GroupId> abandonedBy() {
    Inbox in = q.inboxes.get(m.start.id());
    if (in == null) {
      return List.of();
    }
    List<GroupId> out = new ArrayList<>();
    in.data.forEach((g, items) -> {
      if (items.contains(null)) {
        out.add(g);
      }
    });
    return Collections.unmodifiableList(out);
  }

  @Override
  public List<Object> received(GroupId from) {
    Inbox in = q.inboxes.get(m.start.id());
    List<byte[]> items = in == null ? null : in.data.get(from);
    if (items == null) {
      return List.of();
    }
    // Decoded on every call: each caller gets its own objects, and the state keeps the bytes.
    List<Object> out = new ArrayList<>(items.size());
    for (byte[] b : items) {
      if (b == null) {
        throw new IllegalArgumentException("group " + from + " ended message " + m.start.id()
            + " without executing it (its id was reused with other content) and sends nothing for it");
      }
      out.add(q.codec.decode(b));
    }
    return Collections.unmodifiableList(out);
  }
}
