package io.eyrie.multicast.testing;

import io.eyrie.multicast.Codec;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * An {@link ExecutionContext} for driving a deliverer's {@code deliver}/{@code resume} in a unit
 * test, without a cluster. It behaves like the real one where a deliverer can tell: the payload
 * and every channel item are encoded with the codec (so an unencodable item fails in
 * {@link #send} as it would on a node), and {@link #received} decodes afresh on each call.
 * Items sent are recorded, in order, for the test to inspect.
 */
public final class FakeExecutionContext implements ExecutionContext {

  /** One item a deliverer sent. */
  public record Sent(GroupId to, Object item) {}

  private final Codec codec;
  private final GroupId group;
  private final List<GroupId> dests;
  private final GroupId replyGroup;
  private final byte[] payload;
  /** Each context is a message of its own (deliverers may keep state per message id). */
  private static final java.util.concurrent.atomic.AtomicLong NEXT_SEQ = new java.util.concurrent.atomic.AtomicLong();
  private final MsgId id;
  private final Map<GroupId, List<byte[]>> inbox = new TreeMap<>();
  private final List<byte[]> sentBytes = new ArrayList<>();
  private final List<GroupId> sentTo = new ArrayList<>();
  private long logTime;

  /**
   * Creates the context of one message at one group.
   *
   * @param codec the codec (with the deliverer's registrations)
   * @param group the group executing the message
   * @param payload the message's payload (encoded now)
   * @param replyGroup the group that answers the client
   * @param dests the message's destinations (sorted here)
   */
  public FakeExecutionContext(Codec codec, GroupId group, Object payload, GroupId replyGroup, GroupId... dests) {
    this.codec = codec;
    this.group = group;
    this.payload = codec.encode(payload);
    this.replyGroup = replyGroup;
    List<GroupId> d = new ArrayList<>(List.of(dests));
    d.sort(null);
    this.dests = List.copyOf(d);
    this.id = new MsgId(1, NEXT_SEQ.incrementAndGet(), 0);
  }

  /**
   * Adds an item received on the channel from another group for this message.
   *
   * @param from the sending group
   * @param item the item (encoded now)
   * @return this context
   */
  public FakeExecutionContext receive(GroupId from, Object item) {
    inbox.computeIfAbsent(from, k -> new ArrayList<>()).add(codec.encode(item));
    return this;
  }

  /** Hands every item sent through this context to another context, as the channels would. */
  public void forwardTo(FakeExecutionContext other) {
    for (Sent s : sent()) {
      if (s.to().equals(other.group)) {
        other.receive(group, s.item());
      }
    }
  }

  /** Returns the items sent so far, decoded, in order. */
  public List<Sent> sent() {
    List<Sent> out = new ArrayList<>();
    for (int i = 0; i < sentBytes.size(); i++) {
      out.add(new Sent(sentTo.get(i), codec.decode(sentBytes.get(i))));
    }
    return out;
  }

  /** Sets what {@link #logTime} returns. */
  public FakeExecutionContext logTime(long ms) {
    this.logTime = ms;
    return this;
  }

  @Override
  public MsgId id() {
    return id;
  }

  @Override
  public List<GroupId> dests() {
    return dests;
  }

  @Override
  public GroupId replyGroup() {
    return replyGroup;
  }

  @Override
  public GroupId group() {
    return group;
  }

  @Override
  public byte[] payloadBytes() {
    return payload.clone();
  }

  @Override
  public Object payload() {
    return codec.decode(payload);
  }

  @Override
  public long logTime() {
    return logTime;
  }

  @Override
  public void send(GroupId to, Object item) {
    sendEncoded(to, codec.encode(item));
  }

  @Override
  public void sendEncoded(GroupId to, byte[] encoded) {
    if (to.equals(group)) {
      throw new IllegalArgumentException("a group cannot send to itself: " + to);
    }
    codec.decode(encoded); // as the real context checks it
    sentTo.add(to);
    sentBytes.add(encoded);
  }

  private final java.util.TreeSet<GroupId> abandoned = new java.util.TreeSet<>();

  /**
   * Records that a destination ended this message without executing it (a reused id), as the
   * real context does when that group's word arrives: it shows in {@link #abandonedBy}, and
   * reading its items throws.
   */
  public FakeExecutionContext abandon(GroupId by) {
    abandoned.add(by);
    return this;
  }

  @Override
  public List<GroupId> abandonedBy() {
    return List.copyOf(abandoned);
  }

  @Override
  public List<Object> received(GroupId from) {
    if (abandoned.contains(from)) {
      throw new IllegalArgumentException("group " + from + " ended message " + id + " without executing it");
    }
    List<Object> out = new ArrayList<>();
    for (byte[] b : inbox.getOrDefault(from, List.of())) {
      out.add(codec.decode(b));
    }
    return out;
  }

  private List<GroupId> partitions;

  /** Sets what {@link #partitions()} returns (by default the destinations not named "oracle"). */
  public FakeExecutionContext partitions(GroupId... ps) {
    this.partitions = List.of(ps);
    return this;
  }

  @Override
  public List<GroupId> partitions() {
    if (partitions != null) {
      return partitions;
    }
    List<GroupId> out = new ArrayList<>();
    for (GroupId g : dests) {
      if (!g.name().equals("oracle")) {
        out.add(g);
      }
    }
    return out;
  }
}
