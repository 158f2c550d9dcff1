package io.eyrie.oracle.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The planner on graphs whose best cut is known. Random graphs print their seed; replay with
 * -Deyrie.seed=N.
 */
@Timeout(60)
class PlacementPlannerTest {
  final PlacementPlanner planner = new PlacementPlanner();

  static long seed(String test) {
    long seed = Long.getLong("eyrie.seed", System.nanoTime());
    System.out.println("PlacementPlannerTest." + test + " seed=" + seed);
    return seed;
  }

  static List<GroupId> parts(int k) {
    List<GroupId> out = new ArrayList<>();
    for (int p = 0; p < k; p++) {
      out.add(GroupId.valueOf("p" + p));
    }
    return out;
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

  @Test
  void cliquesFromARandomPlacementEachEndInOnePartition() {
    Random rnd = new Random(seed("cliquesRandom"));
    for (int k : new int[] {2, 4, 8}) {
      Cliques g = new Cliques(k, 24, 3 * k, rnd);
      Map<ObjId, GroupId> cur = g.randomPlacement(parts(k), rnd);
      PlacementPlanner.Plan plan = planner.plan(g.graph, cur, parts(k));
      System.out.println("cliques k=" + k + " from random: " + summary(plan));
      g.assertRecovered(plan, k);
      assertTrue(plan.cutAfter() < plan.cutBefore());
    }
  }

  @Test
  void cliquesFromAllInOnePartitionAreSpreadWhole() {
    Random rnd = new Random(seed("cliquesAllInOne"));
    for (int k : new int[] {2, 4, 6}) {
      Cliques g = new Cliques(k, 20, 2 * k, rnd);
      PlacementPlanner.Plan plan = planner.plan(g.graph, g.allIn(GroupId.valueOf("p" + (k - 1))), parts(k));
      System.out.println("cliques k=" + k + " from all-in-one: " + summary(plan));
      assertEquals(0.0, plan.cutBefore());
      g.assertRecovered(plan, k);
      // The fullest partition keeps one clique: the moves are the others.
      assertEquals(20 * (k - 1), plan.moves());
    }
  }

  @Test
  void twoCliquesPerPartition() {
    Random rnd = new Random(seed("twoPerPartition"));
    Cliques g = new Cliques(8, 16, 10, rnd);
    PlacementPlanner.Plan plan = planner.plan(g.graph, g.randomPlacement(parts(4), rnd), parts(4));
    System.out.println("8 cliques on 4 partitions: " + summary(plan));
    for (List<ObjId> m : g.members) {
      Set<GroupId> where = new HashSet<>();
      m.forEach(id -> where.add(plan.placement().get(id)));
      assertEquals(1, where.size(), "a clique is split over " + where);
    }
    assertTrue(plan.cutAfter() <= g.lightWeight + 1e-9, "only light edges are cut");
    assertTrue(plan.imbalanceAfter() <= 0.10 + 1e-9);
  }

  @Test
  void atTheOptimumNothingMoves() {
    Random rnd = new Random(seed("optimum"));
    Cliques g = new Cliques(4, 20, 6, rnd);
    Map<ObjId, GroupId> cur = new HashMap<>();
    for (int c = 0; c < 4; c++) {
      GroupId p = GroupId.valueOf("p" + ((c + 1) % 4)); // any naming: it is already optimal
      g.members.get(c).forEach(id -> cur.put(id, p));
    }
    PlacementPlanner.Plan plan = planner.plan(g.graph, cur, parts(4));
    System.out.println("optimum: " + summary(plan));
    assertEquals(0, plan.moves());
    assertEquals(new TreeMap<>(cur), plan.placement());
    assertEquals(plan.cutBefore(), plan.cutAfter(), 1e-12);
    assertFalse(plan.worthMoving(), "nothing left to gain");
  }

  @Test
  void aStrayLightEdgeDoesNotSwapCommunitiesButAMisplacedObjectGoesHome() {
    Random rnd = new Random(seed("hysteresis"));
    Cliques g = new Cliques(4, 20, 0, rnd);
    Map<ObjId, GroupId> cur = new HashMap<>();
    for (int c = 0; c < 4; c++) {
      GroupId p = GroupId.valueOf("p" + (c / 2)); // cliques 0 and 1 in p0, 2 and 3 in p1
      g.members.get(c).forEach(id -> cur.put(id, p));
    }
    // One light edge between clique 0 (p0) and clique 2 (p1): a cut of 0.1 that only swapping
    // clique 1 and clique 2 (40 moves) would win back.
    g.graph.record(List.of(g.members.get(0).get(0), g.members.get(2).get(0)), 0.1);
    PlacementPlanner.Plan stray = planner.plan(g.graph, cur, parts(2));
    System.out.println("stray light edge: " + summary(stray));
    assertEquals(0, stray.moves(), "a balanced placement is not reshuffled for a stray light edge");
    assertEquals(new TreeMap<>(cur), stray.placement());

    // An object of clique 0 placed with clique 2 costs all its heavy edges: it goes home.
    ObjId lost = g.members.get(0).get(5);
    cur.put(lost, GroupId.valueOf("p1"));
    ObjId other = g.members.get(2).get(5);
    cur.put(other, GroupId.valueOf("p0")); // keeps the counts balanced
    PlacementPlanner.Plan misplaced = planner.plan(g.graph, cur, parts(2));
    System.out.println("misplaced pair: " + summary(misplaced));
    assertTrue(misplaced.moves() > 0, "a gain of a whole object's edges is worth moving for");
    assertEquals(0.0, misplaced.cutAfter(), 1e-9, "every clique whole again");
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

  @Test
  void plantedPartitionIsFoundWithinASmallFactor() {
    Random rnd = new Random(seed("planted"));
    for (int k : new int[] {2, 4}) {
      int n = 2000;
      int[] group = new int[n];
      double[] planted = new double[1];
      WorkloadGraph g = planted(n, k, 8, 1, rnd, group, planted);
      PlacementPlanner.Plan plan = planner.plan(g, randomPlacement(n, parts(k), rnd), parts(k));
      System.out.println("planted k=" + k + " planted cut=" + planted[0] + ": " + summary(plan));
      assertTrue(plan.cutAfter() <= 1.5 * planted[0], "cut " + plan.cutAfter() + " vs planted " + planted[0]);
      assertTrue(plan.imbalanceAfter() <= 0.10 + 1e-9, "imbalance " + plan.imbalanceAfter());
      assertTrue(plan.worthMoving());
    }
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

  @Test
  void noLocalityIsNotWorthMoving() {
    Random rnd = new Random(seed("noLocality"));
    for (int k : new int[] {2, 4}) {
      int n = 24;
      WorkloadGraph g = uniform(n, 2000, rnd); // the bank test: 24 accounts, random transfers
      Map<ObjId, GroupId> cur = new HashMap<>();
      for (int v = 0; v < n; v++) {
        cur.put(o(v), parts(k).get(v % k));
      }
      PlacementPlanner.Plan plan = planner.plan(g, cur, parts(k));
      System.out.println("uniform n=" + n + " k=" + k + " balanced start: " + summary(plan));
      assertFalse(plan.worthMoving(), "reduction " + plan.cutReduction());
      assertEquals(0, plan.moves(), "balanced already: nothing to move for");
      // From all in one partition (what DS-SMR does to the bank today): balance, no locality.
      Map<ObjId, GroupId> one = new HashMap<>();
      cur.keySet().forEach(id -> one.put(id, GroupId.valueOf("p0")));
      PlacementPlanner.Plan spread = planner.plan(g, one, parts(k));
      System.out.println("uniform n=" + n + " k=" + k + " all-in-one start: " + summary(spread));
      assertFalse(spread.worthMoving(), "reduction " + spread.cutReduction());
      // Objects within 10% (6 each at k=4); accesses within 10%, or within one object's accesses
      // when one account carries more than the slack (24 accounts: each ~1/6 of a partition's).
      Map<GroupId, Integer> count = new TreeMap<>();
      Map<GroupId, Double> accesses = new TreeMap<>();
      double maxW = 0;
      for (Map.Entry<ObjId, GroupId> e : spread.placement().entrySet()) {
        count.merge(e.getValue(), 1, Integer::sum);
        accesses.merge(e.getValue(), g.weight(e.getKey()), Double::sum);
        maxW = Math.max(maxW, g.weight(e.getKey()));
      }
      double avgW = accesses.values().stream().mapToDouble(Double::doubleValue).sum() / k;
      for (GroupId p : parts(k)) {
        assertTrue(Math.abs(count.get(p) - (double) n / k) <= 0.10 * n / k, "objects " + count);
        assertTrue(Math.abs(accesses.get(p) - avgW) <= Math.max(0.10 * avgW, maxW) + 1e-9, "accesses " + accesses);
      }
    }
  }

  @Test
  void sparseRandomTrafficIsNotMistakenForLocality() {
    // Sparse random graphs can be cut 20-40% below a random placement (accidental structure):
    // the null model must see through that.
    Random rnd = new Random(seed("sparseRandom"));
    for (int n : new int[] {1000, 5000}) {
      for (int per : new int[] {3, 20}) {
        WorkloadGraph g = uniform(n, n * per, rnd);
        PlacementPlanner.Plan plan = planner.plan(g, randomPlacement(n, parts(4), rnd), parts(4));
        System.out.println("sparse random n=" + n + " commands/object=" + per + ": " + summary(plan));
        assertFalse(plan.worthMoving(), "reduction " + plan.cutReduction() + " noise " + plan.noiseReduction());
        assertTrue(plan.imbalanceAfter() <= 0.10 + 1e-9, "imbalance " + plan.imbalanceAfter());
      }
    }
  }

  @Test
  void allInOneWithoutEdgesIsSpreadWithinTheBound() {
    Random rnd = new Random(seed("spread"));
    WorkloadGraph g = new WorkloadGraph();
    Map<ObjId, GroupId> cur = new HashMap<>();
    for (int v = 0; v < 1000; v++) {
      cur.put(o(v), GroupId.valueOf("p0"));
      if (rnd.nextInt(3) == 0) {
        g.record(List.of(o(v)), 1 + rnd.nextInt(10)); // accesses without partners
      }
    }
    PlacementPlanner.Plan plan = planner.plan(g, cur, parts(4));
    System.out.println("spread: " + summary(plan));
    Map<GroupId, Integer> count = new TreeMap<>();
    Map<GroupId, Double> weight = new TreeMap<>();
    plan.placement().forEach((id, p) -> {
      count.merge(p, 1, Integer::sum);
      weight.merge(p, Math.max(g.weight(id), 1e-3), Double::sum);
    });
    assertEquals(4, count.size());
    double avgW = weight.values().stream().mapToDouble(Double::doubleValue).sum() / 4;
    for (GroupId p : parts(4)) {
      assertTrue(count.get(p) >= 225 && count.get(p) <= 275, "count " + count);
      assertTrue(Math.abs(weight.get(p) - avgW) <= 0.10 * avgW + 1e-9, "weight " + weight);
    }
    assertTrue(plan.imbalanceAfter() <= 0.10 + 1e-9);
    assertEquals(0.0, plan.cutAfter());
    assertFalse(plan.worthMoving(), "no edges, no locality");
  }

  @Test
  void objectsOfAPartitionNotListedAreMovedOut() {
    Random rnd = new Random(seed("drain"));
    Cliques g = new Cliques(3, 20, 4, rnd);
    Map<ObjId, GroupId> cur = g.randomPlacement(parts(4), rnd); // p3 is being removed
    PlacementPlanner.Plan plan = planner.plan(g.graph, cur, parts(3));
    assertFalse(plan.placement().containsValue(GroupId.valueOf("p3")));
    g.assertRecovered(plan, 3);
  }

  @Test
  void decayLetsANewCommunityStructureTakeOver() {
    Random rnd = new Random(seed("decay"));
    int n = 400;
    int k = 4;
    WorkloadGraph g = new WorkloadGraph();
    int[] oldGroup = new int[n];
    int[] newGroup = new int[n];
    for (int v = 0; v < n; v++) {
      oldGroup[v] = v % k;
      newGroup[v] = (v / 10) % k; // 100 objects each, each new group takes a quarter of each old one
    }
    // Random traffic makes one group's accesses exceed the average by more than 10% now and then,
    // which would make "a group in one partition" infeasible; this test is about decay, not balance.
    PlacementPlanner planner = new PlacementPlanner(0.25, PlacementPlanner.DEFAULT_MIN_CUT_REDUCTION, 1e-3);
    for (int i = 0; i < 20_000; i++) {
      int v = rnd.nextInt(n);
      int u = rnd.nextInt(n);
      if (oldGroup[u] == oldGroup[v] && u != v) {
        g.record(List.of(o(v), o(u)), 1.0);
      }
    }
    Map<ObjId, GroupId> old = new HashMap<>();
    for (int v = 0; v < n; v++) {
      old.put(o(v), parts(k).get(oldGroup[v]));
    }
    assertEquals(0, planner.plan(g, old, parts(k)).moves(), "the old structure is in place");
    for (int round = 0; round < 40; round++) {
      g.decay(0.8);
      for (int i = 0; i < 500; i++) {
        int v = rnd.nextInt(n);
        int u = rnd.nextInt(n);
        if (newGroup[u] == newGroup[v] && u != v) {
          g.record(List.of(o(v), o(u)), 1.0);
        }
      }
    }
    PlacementPlanner.Plan plan = planner.plan(g, old, parts(k));
    System.out.println("decay: " + summary(plan));
    assertTrue(plan.worthMoving());
    // Every new group is together, in its own partition.
    Map<Integer, Set<GroupId>> where = new TreeMap<>();
    for (int v = 0; v < n; v++) {
      where.computeIfAbsent(newGroup[v], x -> new HashSet<>()).add(plan.placement().get(o(v)));
    }
    Set<GroupId> used = new HashSet<>();
    where.values().forEach(s -> {
      assertEquals(1, s.size(), "new group split: " + where);
      used.addAll(s);
    });
    assertEquals(k, used.size());
  }

  @Test
  void samePlanTwice() {
    long seed = seed("determinism");
    PlacementPlanner.Plan[] plans = new PlacementPlanner.Plan[3];
    WorkloadGraph first = null;
    Map<ObjId, GroupId> firstCur = null;
    for (int run = 0; run < 2; run++) {
      Random rnd = new Random(seed);
      int[] group = new int[3000];
      WorkloadGraph g = planted(3000, 4, 6, 2, rnd, group, new double[1]);
      Map<ObjId, GroupId> cur = randomPlacement(3000, parts(4), rnd);
      plans[run] = planner.plan(g, cur, parts(4));
      first = g;
      firstCur = cur;
    }
    plans[2] = planner.plan(first, new TreeMap<>(firstCur), parts(4));
    assertEquals(plans[0], plans[1]);
    assertEquals(plans[1], plans[2]);
  }

  @Test
  void aHundredThousandObjectsForInformation() {
    Random rnd = new Random(seed("large"));
    int n = 100_000;
    int k = 4;
    System.gc();
    Runtime rt = Runtime.getRuntime();
    long heapBefore = rt.totalMemory() - rt.freeMemory();
    int[] group = new int[n];
    double[] planted = new double[1];
    WorkloadGraph g = planted(n, k, 3, 1, rnd, group, planted); // ~400k edges
    System.gc();
    long heapAfter = rt.totalMemory() - rt.freeMemory();
    Map<ObjId, GroupId> cur = randomPlacement(n, parts(k), rnd);
    long t0 = System.nanoTime();
    PlacementPlanner.Plan plan = planner.plan(g, cur, parts(k));
    long ms = (System.nanoTime() - t0) / 1_000_000;
    System.out.printf("large: %d vertices, %d edges; plan in %d ms; %s; planted cut %.0f%n",
        g.vertexCount(), g.edgeCount(), ms, summary(plan), planted[0]);
    System.out.printf("large: graph memory estimated %d B/object, measured ~%d B/object (heap delta incl. the test's arrays)%n",
        g.estimatedBytes() / g.vertexCount(), (heapAfter - heapBefore) / g.vertexCount());
    // For information: this weak structure (about 6 edges inside, 2 across per object) is found
    // in some runs and not in others (see the planner's "Limits"), so only sanity is asserted.
    assertTrue(g.edgeCount() > 300_000, "edges " + g.edgeCount());
    assertTrue(plan.imbalanceAfter() <= 0.10 + 1e-9);
    assertTrue(plan.cutAfter() <= plan.referenceCut() + 1e-9);
  }

  static String summary(PlacementPlanner.Plan p) {
    return String.format("cut %.1f -> %.1f (ref %.1f, -%.0f%%, noise -%.0f%%), imbalance %.3f -> %.3f, moves %d, worth %s",
        p.cutBefore(), p.cutAfter(), p.referenceCut(), 100 * p.cutReduction(), 100 * p.noiseReduction(), p.imbalanceBefore(),
        p.imbalanceAfter(), p.moves(), p.worthMoving());
  }
}
