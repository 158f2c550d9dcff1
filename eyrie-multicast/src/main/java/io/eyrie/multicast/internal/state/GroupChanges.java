package io.eyrie.multicast.internal.state;

import io.eyrie.multicast.Execution;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.internal.Wire;
import io.eyrie.multicast.internal.Wire.Start;
import java.util.Arrays;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Group changes at one group: Eyrie's own messages that add a group to the running cluster or
 * open one, executed in their turn by the {@link ExecutionQueue} instead of the application.
 * Owns telling a group change from an application message and applying it to the group's {@link
 * Membership} and {@link Outboxes}; the listener hears of the change once the entry is applied.
 * Its only state is the membership it changes (whose snapshot section is {@link Membership}'s).
 */
final class GroupChanges {
  private static final Logger LOG = LoggerFactory.getLogger(GroupChanges.class);

  private final GroupState s;
  /** The first byte of an encoded {@link Wire.GroupChange} (its class's registration). */
  private final byte changeTag;
  /** Whether the entry being applied changed the membership (reported after it). */
  private boolean membershipDirty;

  GroupChanges(GroupState s) {
    this.s = s;
    this.changeTag = s.codec.encode(new Wire.GroupChange(s.self, "partition", new int[] {1}, false))[0];
  }

  /**
   * Executes a delivered group change instead of handing it to the application, or returns null
   * if the message is the application's. Eyrie's own types are registered below the
   * application's ids, so the first byte of the payload tells.
   *
   * <p>The change's destinations other than the group it adds are open groups ({@link
   * io.eyrie.multicast.ClusterAdmin#addGroup} sends it to the groups open in its view, and to the
   * new group once every group knows it), so they are marked open here too: a group added to the
   * running cluster starts knowing the groups added before it as known only, and the change that
   * opens it tells it, at one point of its log, which of them are open (review N3: otherwise it
   * would count an open group as halfway for ever).
   */
  Execution execute(Start m) {
    byte[] payload = m.payload();
    if (payload == null || payload.length == 0 || payload[0] != changeTag) {
      return null;
    }
    Object o;
    try {
      o = s.codec.decode(payload);
    } catch (IllegalArgumentException e) {
      return Execution.error("malformed group change: " + e.getMessage());
    }
    if (!(o instanceof Wire.GroupChange c)) {
      return null;
    }
    Membership members = s.members;
    boolean wasKnown = members.knows(c.group());
    String refused = members.apply(c);
    if (refused != null) {
      return Execution.error(refused);
    }
    if (!wasKnown && !c.group().equals(s.self)) {
      s.outboxes.addPeer(c.group());
    }
    for (GroupId d : m.dests()) {
      if (!d.equals(c.group())) {
        members.markOpen(d);
      }
    }
    if (!wasKnown) {
      s.listener().groupKnown(members.known().get(c.group()), Set.copyOf(members.known().keySet()));
    }
    LOG.info("{}: group change delivered: {} {} on nodes {}{}", s.self, c.kind(), c.group(),
        Arrays.toString(c.members()), c.open() ? ", open" : "");
    membershipDirty = true;
    return Execution.done();
  }

  /** Tells the listener of the membership if the entry just applied changed it. */
  void afterEntry(StateListener listener) {
    if (membershipDirty) {
      membershipDirty = false;
      listener.membershipChanged(s.members.known(), s.members.open());
    }
  }
}
