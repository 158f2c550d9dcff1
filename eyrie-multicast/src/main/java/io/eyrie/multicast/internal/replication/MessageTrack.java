package io.eyrie.multicast.internal.replication;

import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.Wire.Component;
import io.eyrie.multicast.internal.Wire.Decision;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What the leader's {@link Exchange} knows of one undecided multi-destination message: its
 * destinations, the other destinations' components it holds, its pull back-off and when it last
 * appended a decision or a forward; and the rules that read only that: the decision it can make
 * (rule 5) and the destinations silent on it (rule 9). Guarded by the exchange.
 */
final class MessageTrack {
  final GroupId[] dests;
  final long since;
  long nextPull;
  long pullInterval = Exchange.T_PULL_NANOS;
  long lastDecide = Long.MIN_VALUE;
  long lastForward = Long.MIN_VALUE;
  /** When the periodic step next tries to decide a message it could not decide (a nanoTime). */
  long nextTry;
  boolean pushed;
  final TreeMap<GroupId, Component> held = new TreeMap<>();

  MessageTrack(GroupId[] dests, long now) {
    this.dests = dests;
    this.since = now;
    this.nextPull = now + Exchange.T_PULL_NANOS;
    this.nextTry = now;
  }

  /** Holds another destination's component; one of a group that is not a destination is ignored. */
  void hold(Component c) {
    if (Arrays.binarySearch(dests, c.group()) >= 0) {
      held.put(c.group(), c);
    }
  }

  /** Doubles the interval between pulls, up to {@link Exchange#MAX_PULL_NANOS}, and sets the next. */
  void backOff(long now) {
    pullInterval = Math.min(2 * pullInterval, Exchange.MAX_PULL_NANOS);
    nextPull = now + pullInterval;
  }

  /**
   * The decision of the message (rule 5), or null if this replica cannot make it yet: with its
   * own applied component {@code own}, another destination's decision that agrees with it, or
   * else a component of every other destination, held or logged.
   */
  Decision decision(GroupId self, MsgId id, Component own, Exchange.View view) {
    for (Component c : held.values()) {
      if (c.decision() != null && Arrays.equals(c.decision().groups(), dests)
          && c.decision().tsOf(self) == own.lts()) {
        Decision v = c.decision();
        return new Decision(id, v.groups(), v.ts(), own.digest(), v.conflict() || v.digest() != own.digest());
      }
    }
    Map<GroupId, Long> logged = view.loggedComponents(id);
    long[] ts = new long[dests.length];
    boolean conflict = !logged.isEmpty();
    for (int i = 0; i < dests.length; i++) {
      // The own component is taken like another's: its digest never conflicts with itself.
      Component c = dests[i].equals(self) ? own : held.get(dests[i]);
      if (c != null) {
        ts[i] = c.lts();
        conflict |= c.digest() != own.digest();
      } else if (logged.containsKey(dests[i])) {
        ts[i] = logged.get(dests[i]);
      } else {
        return null;
      }
    }
    return new Decision(id, dests, ts, own.digest(), conflict);
  }

  /**
   * The other destinations that did not answer for the message: none of their components is held
   * or logged, and no forward sent it to them yet (rule 9).
   */
  List<GroupId> silent(GroupId self, Set<GroupId> forwarded, Map<GroupId, Long> logged) {
    List<GroupId> silent = new ArrayList<>();
    for (GroupId d : dests) {
      if (!d.equals(self) && !held.containsKey(d) && !logged.containsKey(d) && !forwarded.contains(d)) {
        silent.add(d);
      }
    }
    return silent;
  }
}
