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
   * Returns the replicated log time in milliseconds: the largest submission time seen in this
   * group's log (the same on every replica; never earlier than a previous call).
   */
  long logTime();

  /**
   * Sends an item for this message to another group. The item is appended to this group's
   * replicated outbox and delivered to the destination group exactly once, in order. Sending
   * to the reply group also counts as this group's signal that it has begun executing the
   * message.
   *
   * @param to a group of the cluster other than this one
   * @param item a registered object
   * @throws IllegalArgumentException if {@code to} is unknown or this group
   */
  void send(GroupId to, Object item);

  /**
   * Returns the items received for this message from one group, in arrival order.
   *
   * @param from the sending group
   * @return the items, possibly empty
   */
  List<Object> received(GroupId from);
}
