package io.eyrie.multicast.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.Node;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Checks the atomic multicast properties on the delivery sequences recorded by every replica
 * ({@link RecordingDeliverer}): integrity, uniform agreement (including every acknowledged
 * message), identical order at the replicas of a group, prefix order and acyclic order.
 */
public final class MulticastChecker {
  private MulticastChecker() {}

  /** Returns each running replica's sequence: group -> node -> tokens. */
  public static Map<GroupId, Map<Integer, List<Long>>> sequences(EmbeddedCluster c) {
    Map<GroupId, Map<Integer, List<Long>>> out = new TreeMap<>();
    for (Node n : c.runningNodes().values()) {
      for (GroupId g : n.groups()) {
        out.computeIfAbsent(g, k -> new TreeMap<>())
            .put(n.id(), n.inspect(g, d -> ((RecordingDeliverer) d).delivered()));
      }
    }
    return out;
  }

  /**
   * Waits until every replica of every group has delivered everything it must (all that any
   * replica delivered and all acknowledged tokens, for the groups among their destinations),
   * then checks every property.
   */
  public static void awaitAndCheck(EmbeddedCluster c, Map<Long, Set<GroupId>> destsOf, Set<Long> acked,
      Duration timeout) {
    String[] last = {""};
    Waits.until(timeout, () -> {
      Map<GroupId, Map<Integer, List<Long>>> seqs = sequences(c);
      Map<GroupId, Set<Long>> expected = expected(seqs, destsOf, acked);
      for (Map.Entry<GroupId, Map<Integer, List<Long>>> g : seqs.entrySet()) {
        Set<Long> exp = expected.getOrDefault(g.getKey(), Set.of());
        for (Map.Entry<Integer, List<Long>> r : g.getValue().entrySet()) {
          if (r.getValue().size() < exp.size() || !new HashSet<>(r.getValue()).containsAll(exp)) {
            last[0] = "group " + g.getKey() + " node " + r.getKey() + " delivered " + r.getValue().size()
                + " of " + exp.size();
            return false;
          }
        }
      }
      return true;
    }, () -> "uniform agreement not reached: " + last[0]);
    check(sequences(c), destsOf, acked);
  }

  private static Map<GroupId, Set<Long>> expected(Map<GroupId, Map<Integer, List<Long>>> seqs,
      Map<Long, Set<GroupId>> destsOf, Set<Long> acked) {
    Set<Long> any = new HashSet<>(acked);
    seqs.values().forEach(m -> m.values().forEach(any::addAll));
    Map<GroupId, Set<Long>> exp = new HashMap<>();
    for (long t : any) {
      for (GroupId g : destsOf.getOrDefault(t, Set.of())) {
        exp.computeIfAbsent(g, k -> new HashSet<>()).add(t);
      }
    }
    return exp;
  }

  /** Checks the properties on converged sequences. */
  public static void check(Map<GroupId, Map<Integer, List<Long>>> seqs, Map<Long, Set<GroupId>> destsOf,
      Set<Long> acked) {
    Map<GroupId, List<Long>> order = new TreeMap<>();
    for (Map.Entry<GroupId, Map<Integer, List<Long>>> g : seqs.entrySet()) {
      List<Long> first = null;
      for (Map.Entry<Integer, List<Long>> r : g.getValue().entrySet()) {
        List<Long> seq = r.getValue();
        Set<Long> seen = new HashSet<>();
        for (long t : seq) {
          assertTrue(seen.add(t), "integrity: group " + g.getKey() + " node " + r.getKey() + " delivered " + t + " twice");
          Set<GroupId> d = destsOf.get(t);
          assertTrue(d != null, "integrity: phantom token " + t + " at " + g.getKey());
          assertTrue(d.contains(g.getKey()), "integrity: " + t + " delivered at non-destination " + g.getKey());
        }
        if (first == null) {
          first = seq;
        } else {
          assertEquals(first, seq, "replicas of " + g.getKey() + " delivered different sequences");
        }
      }
      order.put(g.getKey(), first);
    }
    for (long t : acked) {
      for (GroupId g : destsOf.get(t)) {
        if (order.containsKey(g)) {
          assertTrue(order.get(g).contains(t), "acknowledged " + t + " missing at " + g);
        }
      }
    }
    List<GroupId> gs = new ArrayList<>(order.keySet());
    for (int i = 0; i < gs.size(); i++) {
      for (int j = i + 1; j < gs.size(); j++) {
        Set<Long> inJ = new HashSet<>(order.get(gs.get(j)));
        Set<Long> inI = new HashSet<>(order.get(gs.get(i)));
        List<Long> a = order.get(gs.get(i)).stream().filter(inJ::contains).toList();
        List<Long> b = order.get(gs.get(j)).stream().filter(inI::contains).toList();
        assertEquals(a, b, "prefix order: " + gs.get(i) + " and " + gs.get(j) + " order common messages differently");
      }
    }
    assertAcyclic(order);
  }

  /**
   * Fails if the union of the groups' delivery orders (each group's consecutive pairs) has a
   * cycle, naming a few of the messages in it.
   *
   * @param order each group's deliveries, in order
   * @param <T> how a message is named
   */
  public static <T> void assertAcyclic(Map<GroupId, List<T>> order) {
    Map<T, Set<T>> succ = new HashMap<>();
    Map<T, Integer> indeg = new HashMap<>();
    for (List<T> seq : order.values()) {
      for (int i = 0; i < seq.size(); i++) {
        indeg.putIfAbsent(seq.get(i), 0);
        if (i > 0 && succ.computeIfAbsent(seq.get(i - 1), k -> new HashSet<>()).add(seq.get(i))) {
          indeg.merge(seq.get(i), 1, Integer::sum);
        }
      }
    }
    ArrayDeque<T> ready = new ArrayDeque<>();
    indeg.forEach((t, d) -> {
      if (d == 0) {
        ready.add(t);
      }
    });
    int seen = 0;
    while (!ready.isEmpty()) {
      T t = ready.poll();
      seen++;
      for (T s : succ.getOrDefault(t, Set.of())) {
        if (indeg.merge(s, -1, Integer::sum) == 0) {
          ready.add(s);
        }
      }
    }
    if (seen != indeg.size()) {
      List<T> inCycle = new ArrayList<>();
      indeg.forEach((t, d) -> {
        if (d > 0 && inCycle.size() < 6) {
          inCycle.add(t);
        }
      });
      fail("acyclic order: the union of the groups' delivery orders has a cycle through " + (indeg.size() - seen)
          + " messages, e.g. " + inCycle);
    }
  }
}
