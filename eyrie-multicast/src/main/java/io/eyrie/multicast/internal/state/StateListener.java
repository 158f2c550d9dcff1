package io.eyrie.multicast.internal.state;

import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import java.util.Set;
import java.util.SortedMap;

/**
 * The local effects of applying entries to a {@link GroupState}: they complete waiting clients
 * and wake the channel senders, and never feed back into the state.
 */
public interface StateListener {
  /** Ignores every effect. */
  StateListener NONE = new StateListener() {
    @Override
    public void reply(MsgId id, StoredReply reply) {}

    @Override
    public void outboxChanged(GroupId to) {}
  };

  /** A reply for a message is final and may be sent to a waiting client. */
  void reply(MsgId id, StoredReply reply);

  /** The outbox towards a group has new items. */
  void outboxChanged(GroupId to);

  /**
   * A multi-destination message became pending here, undecided: the leader pushes its component
   * to the other destinations (design 4.3.1, rule 4). Called while applying.
   */
  default void undecided(MsgId id) {}

  /**
   * The groups this group knows of, or which of them are open, changed (a group change was
   * delivered, or a snapshot was installed).
   */
  default void membershipChanged(SortedMap<GroupId, ClusterConfig.GroupInfo> known, Set<GroupId> open) {}

  /**
   * A delivered group change made a group known here; {@code knownThen} are the groups this
   * group knew right after it (the new one included). Every destination of the change delivers
   * it at the same point of the order of group changes, so this set is the same at each: the
   * groups an added group's replicas start knowing (see {@code Node}). Called while applying,
   * before {@link #membershipChanged}.
   */
  default void groupKnown(ClusterConfig.GroupInfo added, Set<GroupId> knownThen) {}
}
