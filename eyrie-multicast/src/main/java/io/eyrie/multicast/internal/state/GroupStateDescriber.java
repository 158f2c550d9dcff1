package io.eyrie.multicast.internal.state;

import io.eyrie.multicast.MsgId;

/** The operators' view of a {@link GroupState}: what it holds and what it waits for. Not part of the state. */
final class GroupStateDescriber {
  private GroupStateDescriber() {}

  /** See {@link GroupState#describe()}. */
  static String describe(GroupState s) {
    StringBuilder b = new StringBuilder();
    Ordering order = s.order;
    ExecutionQueue exec = s.exec;
    b.append(s.self).append(": clock=").append(order.clock).append(" pending=").append(order.pending.size())
        .append(" undecided=").append(order.undecided.size()).append(" decided=").append(order.decided.size())
        .append(" queue=").append(exec.size()).append(" retained=").append(s.retention.size())
        .append(" executed=").append(s.stats.executed).append('\n');
    order.describeTo(b);
    exec.describeTo(b);
    s.outboxes.describeTo(b);
    return b.toString();
  }

  /** See {@link GroupState#describe(MsgId)}. */
  static String describe(GroupState s, MsgId id) {
    return s.self + ": " + id + s.order.describe(id) + (s.exec.isQueued(id) ? " queued" : "")
        + s.clients.describeRecord(id)
        + (s.retention.get(id) != null ? " retained(decided=" + (s.retention.get(id).decision != null) + ", acked="
            + s.retention.get(id).acked + ")" : "")
        + (s.clients.tombstones.containsKey(id.client()) ? " TOMBSTONE" : "");
  }
}
