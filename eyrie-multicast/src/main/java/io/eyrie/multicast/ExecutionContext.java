package io.eyrie.multicast;

import java.util.List;

/**
 * The message being executed by a {@link Deliverer}, and what the deliverer may do besides
 * replying: send items to other groups over the exactly-once, FIFO group channels.
 */
public interface ExecutionContext {

  /** Returns the message's id. */
  MsgId id();

  /** Returns the message's destination groups, ascending. */
  List<GroupId> dests();

  /** Returns the destination group whose reply the client receives. */
  GroupId replyGroup();

  /** Returns the group this replica belongs to. */
  GroupId group();

  /** Returns true if this group answers the client. */
  default boolean isReplyGroup() {
    return group().equals(replyGroup());
  }

  /** Returns the payload's bytes as the client encoded them. */
  byte[] payloadBytes();

  /** Returns the decoded payload. */
  Object payload();

  /**
   * Returns the replicated log time in milliseconds: it follows the submission times (the
   * submitting nodes' clocks) in this group's log, but moves forward by at most a minute per
   * entry, so one node's clock stepped forward cannot make it jump (the same on every replica;
   * never earlier than a previous call; it may lag real time in a group that is seldom used).
   */
  long logTime();

  /**
   * Sends an item for this message to another group. The item is appended to this group's
   * replicated outbox and delivered to the destination group exactly once, in order. Sending
   * to the reply group also counts as this group's signal that it has begun executing the
   * message.
   *
   * @param to a group of the cluster other than this one
   * @param item a registered object; it is encoded at once, so later changes to it are not sent
   * @throws IllegalArgumentException if {@code to} is unknown or this group, or the item cannot
   *     be encoded (an unregistered class, or nested deeper than {@link Codec#MAX_DEPTH}) or is
   *     larger than {@link #MAX_ITEM_BYTES}; if the
   *     deliverer lets it propagate, the message's execution ends with an error reply
   */
  void send(GroupId to, Object item);

  /**
   * Sends an item already encoded with the cluster's codec ({@link Codec#encode}): the same as
   * {@link #send} of the object it decodes to, without encoding it again, for an item that goes
   * to several groups. The bytes are decoded once here, as the receivers will read them, so that
   * bytes that do not decode fail here, at every replica alike, and never reach a receiver.
   *
   * @param to a group of the cluster other than this one
   * @param encoded what {@link Codec#encode} returned for the item; not copied, so not to be
   *     changed after
   * @throws IllegalArgumentException if {@code to} is unknown or this group, the bytes do not
   *     decode, or they are more than {@link #MAX_ITEM_BYTES}
   */
  void sendEncoded(GroupId to, byte[] encoded);

  /**
   * The largest encoded item {@link #send} accepts: 3 MiB. A channel batch is one Ratis log
   * entry at the receiver, and Ratis's leader sends a follower at most 4 MiB of entries per
   * request ({@code raft.server.log.appender.buffer.byte-limit}; a single larger entry is never
   * sent, and the channel would stall resending it). Batches are cut at 1 MiB, so an entry is
   * at most the larger of 1 MiB and one item, plus its framing. Applications that move or
   * exchange more at once (a move of many large objects) get an error instead.
   */
  int MAX_ITEM_BYTES = 3 << 20;

  /**
   * Returns the items received for this message from one group, in arrival order, decoded
   * afresh on each call.
   *
   * @param from the sending group
   * @return the items, possibly empty
   * @throws IllegalArgumentException if an item cannot be decoded here, or if {@code from}
   *     abandoned the message ({@link #abandonedBy})
   */
  List<Object> received(GroupId from);

  /**
   * Returns the destinations, ascending, that ended this message without executing it and will
   * send nothing more for it: they learned of another message under the same id (a reused client
   * id), which no group that learns of it executes. A wait for such a group ends (it counts as
   * having sent an item), and reading its items throws. An application that finds a group here
   * must not complete the message as if every destination had run it: it should undo or refuse
   * what it started and tell the other destinations, which may wait for it in turn (the DS-SMR
   * oracle sends a REFUSED verdict). Empty while every destination executes it; the default
   * returns an empty list.
   */
  default List<GroupId> abandonedBy() {
    return List.of();
  }

  /**
   * Returns the partition groups this group knows of at this point of its log, ascending: those
   * of the cluster file and those added since ({@link ClusterAdmin#addGroup}), in the same order
   * at every replica. A command that must reach every partition compares its destinations with
   * this list to validate it (every destination of a message knows the groups it names).
   */
  List<GroupId> partitions();

  /**
   * Returns the partition groups this group knows of and that are open at this point of its log,
   * ascending: {@link #partitions()} without the groups whose addition has not finished
   * ({@link ClusterAdmin#addGroup}), which clients cannot name yet and which hold no objects. A
   * command that must reach every partition that may hold something (to tell that an object exists
   * nowhere) compares its destinations with this list. The default returns {@link #partitions()}.
   */
  default List<GroupId> openPartitions() {
    return partitions();
  }
}
