package io.eyrie.oracle.placement;

import static io.eyrie.oracle.placement.PlannerFixtures.o;
import static io.eyrie.oracle.placement.PlannerFixtures.parts;
import static io.eyrie.oracle.placement.PlannerFixtures.plan;
import static io.eyrie.oracle.placement.PlannerFixtures.planted;
import static io.eyrie.oracle.placement.PlannerFixtures.randomPlacement;
import static io.eyrie.oracle.placement.PlannerFixtures.seed;
import static io.eyrie.oracle.placement.PlannerFixtures.summary;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.ObjId;
import io.eyrie.multicast.GroupId;
import io.eyrie.oracle.placement.PlannerFixtures.Cliques;
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
 * The planner's plans where the best cut is known (cliques, planted partitions) or the bound is
 * the point (objects without edges): the cut it finds and the balance it keeps.
 */
@Timeout(60)
class PlannerQualityTest {
  @Test
  void cliquesFromARandomPlacementEachEndInOnePartition() {
    Random rnd = new Random(seed("cliquesRandom"));
    for (int k : new int[] {2, 4, 8}) {
      Cliques g = new Cliques(k, 24, 3 * k, rnd);
      Map<ObjId, GroupId> cur = g.randomPlacement(parts(k), rnd);
      PlacementPlanner.Plan plan = plan(g.graph, cur, k);
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
      PlacementPlanner.Plan plan = plan(g.graph, g.allIn(GroupId.valueOf("p" + (k - 1))), k);
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
    PlacementPlanner.Plan plan = plan(g.graph, g.randomPlacement(parts(4), rnd), 4);
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
  void plantedPartitionIsFoundWithinASmallFactor() {
    Random rnd = new Random(seed("planted"));
    for (int k : new int[] {2, 4}) {
      int n = 2000;
      int[] group = new int[n];
      double[] planted = new double[1];
      WorkloadGraph g = planted(n, k, 8, 1, rnd, group, planted);
      PlacementPlanner.Plan plan = plan(g, randomPlacement(n, parts(k), rnd), k);
      System.out.println("planted k=" + k + " planted cut=" + planted[0] + ": " + summary(plan));
      assertTrue(plan.cutAfter() <= 1.5 * planted[0], "cut " + plan.cutAfter() + " vs planted " + planted[0]);
      assertTrue(plan.imbalanceAfter() <= 0.10 + 1e-9, "imbalance " + plan.imbalanceAfter());
      assertTrue(plan.worthMoving());
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
    PlacementPlanner.Plan plan = plan(g, cur, 4);
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
    PlacementPlanner.Plan plan = plan(g.graph, cur, 3);
    assertFalse(plan.placement().containsValue(GroupId.valueOf("p3")));
    g.assertRecovered(plan, 3);
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
    PlacementPlanner.Plan plan = plan(g, cur, k);
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
}
