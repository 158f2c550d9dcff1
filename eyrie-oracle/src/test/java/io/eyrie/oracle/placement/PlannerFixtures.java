package io.eyrie.oracle.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.ObjId;
import io.eyrie.multicast.GroupId;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.IntFunction;

/**
 * The graphs, placements and seeds that the planner tests share: cliques, planted partitions and
 * uniform traffic. Random graphs print their seed; replay with -Deyrie.seed=N.
 */
final class PlannerFixtures {
  /** The planner with the default settings (it keeps no state between plans). */
  static final PlacementPlanner PLANNER = new PlacementPlanner();

  private PlannerFixtures() {}

  static long seed(String test) {
    long seed = Long.getLong("eyrie.seed", System.nanoTime());
    System.out.println("planner test " + test + " seed=" + seed);
    return seed;
  }

  static List<GroupId> parts(int k) {
    List<GroupId> out = new ArrayList<>();
    for (int p = 0; p < k; p++) {
      out.add(GroupId.valueOf("p" + p));
    }
    return out;
  }

  /** The default planner's plan for the graph from the placement over partitions p0 to p(k-1). */
  static PlacementPlanner.Plan plan(WorkloadGraph g, Map<ObjId, GroupId> cur, int k) {
    return PLANNER.plan(g, cur, parts(k));
  }

  static ObjId o(long v) {
    return ObjId.valueOf(v);
  }

  /** k cliques of {@code size} objects with shuffled ids, and a few light edges between them. */
  static final class Cliques {
    final WorkloadGraph graph = new WorkloadGraph();
    final List<List<ObjId>> members = new ArrayList<>();
    double lightWeight;

    Cliques(int k, int size, int light, Random rnd) {
      List<Long> ids = new ArrayList<>();
      for (long v = 0; v < (long) k * size; v++) {
        ids.add(1000 + v * 7);
      }
      Collections.shuffle(ids, rnd);
      for (int c = 0; c < k; c++) {
        List<ObjId> m = new ArrayList<>();
        for (int i = 0; i < size; i++) {
          m.add(o(ids.get(c * size + i)));
        }
        members.add(m);
        for (int i = 0; i < size; i++) {
          for (int j = i + 1; j < size; j++) {
            graph.record(List.of(m.get(i), m.get(j)), 1.0 + rnd.nextInt(3));
          }
        }
      }
      Set<String> seen = new HashSet<>();
      while (seen.size() < light) {
        int a = rnd.nextInt(k);
        int b = rnd.nextInt(k);
        if (a == b) {
          continue;
        }
        ObjId x = members.get(a).get(rnd.nextInt(size));
        ObjId y = members.get(b).get(rnd.nextInt(size));
        if (seen.add(Math.min(x.value(), y.value()) + "-" + Math.max(x.value(), y.value()))) {
          graph.record(List.of(x, y), 0.1);
          lightWeight += 0.1;
        }
      }
    }

    /** A placement with every member of clique {@code c} in partition {@code partitionOf.apply(c)}. */
    Map<ObjId, GroupId> placedBy(IntFunction<GroupId> partitionOf) {
      Map<ObjId, GroupId> out = new HashMap<>();
      for (int c = 0; c < members.size(); c++) {
        GroupId p = partitionOf.apply(c);
        members.get(c).forEach(id -> out.put(id, p));
      }
      return out;
    }

    Map<ObjId, GroupId> randomPlacement(List<GroupId> parts, Random rnd) {
      Map<ObjId, GroupId> out = new HashMap<>();
      List<ObjId> all = new ArrayList<>();
      members.forEach(all::addAll);
      Collections.shuffle(all, rnd);
      for (int i = 0; i < all.size(); i++) {
        out.put(all.get(i), parts.get(i % parts.size())); // balanced, locality-blind
      }
      return out;
    }

    Map<ObjId, GroupId> allIn(GroupId p) {
      Map<ObjId, GroupId> out = new HashMap<>();
      members.forEach(m -> m.forEach(id -> out.put(id, p)));
      return out;
    }

    /** Each clique in one partition, and cliques spread evenly. */
    void assertRecovered(PlacementPlanner.Plan plan, int k) {
      Map<GroupId, Integer> perPartition = new TreeMap<>();
      for (List<ObjId> m : members) {
        Set<GroupId> where = new HashSet<>();
        m.forEach(id -> where.add(plan.placement().get(id)));
        assertEquals(1, where.size(), "a clique is split over " + where);
        perPartition.merge(where.iterator().next(), 1, Integer::sum);
      }
      assertEquals(k, perPartition.size(), "cliques per partition " + perPartition);
      assertEquals(lightWeight, plan.cutAfter(), 1e-9, "cut = the light edges only");
      assertTrue(plan.imbalanceAfter() <= 0.10 + 1e-9, "imbalance " + plan.imbalanceAfter());
      assertTrue(plan.worthMoving(), "reduction " + plan.cutReduction());
    }
  }

  /** n objects in k planted groups: {@code in} partners inside the group, {@code out} outside. */
  static WorkloadGraph planted(int n, int k, int in, int out, Random rnd, int[] group, double[] plantedCut) {
    WorkloadGraph g = new WorkloadGraph(Math.max(n, 2), WorkloadGraph.DEFAULT_MAX_EDGES_PER_VERTEX, 1e-3);
    List<Integer> perm = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      perm.add(i);
    }
    Collections.shuffle(perm, rnd);
    for (int i = 0; i < n; i++) {
      group[perm.get(i)] = i % k; // groups are not id ranges
    }
    List<List<Integer>> byGroup = new ArrayList<>();
    for (int p = 0; p < k; p++) {
      byGroup.add(new ArrayList<>());
    }
    for (int i = 0; i < n; i++) {
      byGroup.get(group[i]).add(i);
    }
    for (int v = 0; v < n; v++) {
      List<Integer> mine = byGroup.get(group[v]);
      for (int j = 0; j < in; j++) {
        int u = mine.get(rnd.nextInt(mine.size()));
        if (u != v) {
          g.record(List.of(o(v), o(u)), 1.0);
        }
      }
      for (int j = 0; j < out; j++) {
        int u = rnd.nextInt(n);
        if (group[u] != group[v]) {
          g.record(List.of(o(v), o(u)), 1.0);
          plantedCut[0] += 1.0;
        }
      }
    }
    return g;
  }

  static Map<ObjId, GroupId> randomPlacement(int n, List<GroupId> parts, Random rnd) {
    Map<ObjId, GroupId> out = new HashMap<>();
    for (int v = 0; v < n; v++) {
      out.put(o(v), parts.get(rnd.nextInt(parts.size())));
    }
    return out;
  }

  /** Random commands on pairs of n objects: no locality at all. */
  static WorkloadGraph uniform(int n, int commands, Random rnd) {
    WorkloadGraph g = new WorkloadGraph();
    for (int i = 0; i < commands; i++) {
      int a = rnd.nextInt(n);
      int b = rnd.nextInt(n);
      g.record(List.of(o(a), o(b)), 1.0);
    }
    return g;
  }

  static String summary(PlacementPlanner.Plan p) {
    return String.format("cut %.1f -> %.1f (ref %.1f, -%.0f%%, noise -%.0f%%), imbalance %.3f -> %.3f, moves %d, worth %s",
        p.cutBefore(), p.cutAfter(), p.referenceCut(), 100 * p.cutReduction(), 100 * p.noiseReduction(), p.imbalanceBefore(),
        p.imbalanceAfter(), p.moves(), p.worthMoving());
  }
}
