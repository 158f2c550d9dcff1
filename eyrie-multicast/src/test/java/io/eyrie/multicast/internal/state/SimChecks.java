package io.eyrie.multicast.internal.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.state.SimWorkload.MsgInfo;
import io.eyrie.multicast.testing.MulticastChecker;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The atomic multicast properties, checked on the delivery (execution) sequences that the
 * replicas' {@link SimDeliverer}s recorded: identical order at the replicas of a group, integrity,
 * validity and agreement, prefix order and acyclic order; and one final reply per message.
 */
final class SimChecks {
  /**
   * The errors a reused id makes groups log on purpose (for {@code @ExpectedErrors}): its other
   * version, the conflicting decision, and the message ended without executing it.
   */
  static final String REUSED_ID_ERRORS = "with other content|holds another message with the id|the id was reused"
      + "|disagrees with this group's log|without executing it";

  private SimChecks() {}

  static void check(SimGroups sim, Map<MsgId, MsgInfo> msgs) {
    Map<GroupId, List<MsgId>> seqs = new TreeMap<>();
    Map<GroupId, Set<MsgId>> sets = new TreeMap<>();
    Map<GroupId, List<MsgId>> starts = new TreeMap<>();
    for (int g = 0; g < sim.n; g++) {
      GroupId gid = sim.gid(g);
      List<MsgId> seq = sim.rep(g, 0).app.seen();
      for (int r = 1; r < SimGroups.REPLICAS; r++) {
        assertEquals(seq, sim.rep(g, r).app.seen(), () -> gid + ": replicas deliver in different orders");
        assertEquals(sim.rep(g, 0).app.delivered(), sim.rep(g, r).app.delivered(),
            () -> gid + ": replicas start in different orders");
      }
      starts.put(gid, sim.rep(g, 0).app.delivered());
      Set<MsgId> set = new HashSet<>();
      for (MsgId id : seq) {
        if (!set.add(id)) {
          fail("integrity: " + gid + " delivers " + id + " twice");
        }
        MsgInfo mi = msgs.get(id);
        if (mi == null) {
          fail("integrity: " + gid + " delivers " + id + " which was never started");
        }
        if (Arrays.binarySearch(mi.start.dests(), gid) < 0) {
          fail("integrity: " + gid + " delivers " + id + " whose dests are " + Arrays.toString(mi.start.dests()));
        }
      }
      for (int r = 0; r < SimGroups.REPLICAS; r++) {
        StateCounters st = sim.rep(g, r).state.stats();
        assertEquals(seq.size(), st.delivered, () -> gid + ": stats.delivered differs from the deliveries");
        assertEquals(seq.size(), st.executed, () -> gid + ": stats.executed differs from the deliveries");
      }
      seqs.put(gid, seq);
      sets.put(gid, set);
    }
    for (MsgInfo mi : msgs.values()) {
      if (mi.refusedEverywhere()) {
        // Every Start was refused EXPIRED: the message was never started, so it must be
        // delivered nowhere (a refused Start is never executed) and never answered.
        for (GroupId d : mi.start.dests()) {
          if (sets.get(d).contains(mi.start.id())) {
            fail("integrity: " + d + " delivers " + mi.start.id() + " though every Start of it was refused EXPIRED");
          }
        }
        if (mi.finalReply != null) {
          fail("a final reply for " + mi.start.id() + " though every Start of it was refused EXPIRED");
        }
        continue;
      }
      for (GroupId d : mi.start.dests()) {
        if (!sets.get(d).contains(mi.start.id())) {
          fail("agreement: " + mi.start.id() + " to " + Arrays.toString(mi.start.dests()) + " never delivered at " + d);
        }
      }
      if (mi.finalReply == null && !mi.abandoned) {
        fail("no final reply for " + mi.start.id() + " from its reply group " + mi.start.replyGroup());
      }
    }
    checkPrefixOrder(seqs, sets);
    checkAcyclic(seqs);
    checkSameDecision(sim, msgs);
    checkRealTime(starts, msgs);
    for (int g = 0; g < sim.n; g++) {
      sim.assertReplicasEqual(g, "at the end");
    }
    if (!sim.violations.isEmpty()) {
      fail("violations: " + sim.violations);
    }
  }

  /**
   * Every destination decided a multi-group message with the same V (hence the same final
   * timestamp); messages with a reused id (conflicting) are compared nowhere (rule 12).
   */
  static void checkSameDecision(SimGroups sim, Map<MsgId, MsgInfo> msgs) {
    for (MsgInfo mi : msgs.values()) {
      GroupId[] d = mi.start.dests();
      if (d.length < 2) {
        continue;
      }
      io.eyrie.multicast.internal.Wire.Decision first = null;
      GroupId at = null;
      for (GroupId g : d) {
        io.eyrie.multicast.internal.Wire.Decision v = sim.grp[sim.idx(g)].decisions.get(mi.start.id());
        if (v == null) {
          fail("agreement: " + g + " never decided " + mi.start.id());
        }
        if (v.conflict()) {
          first = null;
          break;
        }
        if (first == null) {
          first = v;
          at = g;
        } else if (!Arrays.equals(first.groups(), v.groups()) || !Arrays.equals(first.ts(), v.ts())) {
          fail("same V: " + mi.start.id() + " decided with " + Arrays.toString(first.ts()) + " at " + at + " and "
              + Arrays.toString(v.ts()) + " at " + g);
        }
      }
    }
  }

  /**
   * Real time (rule 11, H12, K7): a message invoked after another's reply was released to its
   * client does not start before it at any common destination (the start order: a message that
   * answered blocked starts later than it was delivered).
   */
  static void checkRealTime(Map<GroupId, List<MsgId>> seqs, Map<MsgId, MsgInfo> msgs) {
    Map<GroupId, Map<MsgId, Integer>> pos = new TreeMap<>();
    seqs.forEach((g, seq) -> {
      Map<MsgId, Integer> p = new HashMap<>();
      for (int i = 0; i < seq.size(); i++) {
        p.put(seq.get(i), i);
      }
      pos.put(g, p);
    });
    List<MsgInfo> released = new ArrayList<>();
    for (MsgInfo mi : msgs.values()) {
      if (mi.finalReply != null && mi.finalReply.status() == io.eyrie.multicast.Status.OK) {
        released.add(mi);
      }
    }
    for (MsgInfo a : released) {
      for (MsgInfo b : msgs.values()) {
        if (b.invokedAt <= a.releasedAt) {
          continue;
        }
        for (GroupId g : a.start.dests()) {
          Map<MsgId, Integer> p = pos.get(g);
          Integer pa = p.get(a.start.id());
          Integer pb = p.get(b.start.id());
          if (pa != null && pb != null && pb < pa) {
            fail("real time: " + b.start.id() + " was invoked after the reply of " + a.start.id()
                + " was released, but " + g + " starts it first");
          }
        }
      }
    }
  }

  /** For any two groups, the messages both delivered appear in the same relative order. */
  static void checkPrefixOrder(Map<GroupId, List<MsgId>> seqs, Map<GroupId, Set<MsgId>> sets) {
    List<GroupId> gs = new ArrayList<>(seqs.keySet());
    for (int i = 0; i < gs.size(); i++) {
      for (int j = i + 1; j < gs.size(); j++) {
        List<MsgId> a = filter(seqs.get(gs.get(i)), sets.get(gs.get(j)));
        List<MsgId> b = filter(seqs.get(gs.get(j)), sets.get(gs.get(i)));
        if (!a.equals(b)) {
          int k = 0;
          while (k < a.size() && k < b.size() && a.get(k).equals(b.get(k))) {
            k++;
          }
          fail("prefix order: " + gs.get(i) + " and " + gs.get(j) + " order their common messages differently from"
              + " position " + k + ": " + a.subList(k, Math.min(a.size(), k + 3)) + " vs "
              + b.subList(k, Math.min(b.size(), k + 3)));
        }
      }
    }
  }

  private static List<MsgId> filter(List<MsgId> seq, Set<MsgId> keep) {
    List<MsgId> out = new ArrayList<>();
    for (MsgId id : seq) {
      if (keep.contains(id)) {
        out.add(id);
      }
    }
    return out;
  }

  /** The union of the groups' delivery orders (consecutive pairs) has no cycle. */
  static void checkAcyclic(Map<GroupId, List<MsgId>> seqs) {
    MulticastChecker.assertAcyclic(seqs);
  }
}
