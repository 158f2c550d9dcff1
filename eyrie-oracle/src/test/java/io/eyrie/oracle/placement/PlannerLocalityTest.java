package io.eyrie.oracle.placement;

import static io.eyrie.oracle.placement.PlannerFixtures.o;
import static io.eyrie.oracle.placement.PlannerFixtures.parts;
import static io.eyrie.oracle.placement.PlannerFixtures.plan;
import static io.eyrie.oracle.placement.PlannerFixtures.randomPlacement;
import static io.eyrie.oracle.placement.PlannerFixtures.seed;
import static io.eyrie.oracle.placement.PlannerFixtures.summary;
import static io.eyrie.oracle.placement.PlannerFixtures.uniform;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.ObjId;
import io.eyrie.multicast.GroupId;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The planner's judgement of locality: traffic without structure, dense or sparse, is not worth
 * moving objects for, however much accidental structure the planner finds in it.
 */
@Timeout(60)
class PlannerLocalityTest {
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
      PlacementPlanner.Plan plan = plan(g, cur, k);
      System.out.println("uniform n=" + n + " k=" + k + " balanced start: " + summary(plan));
      assertFalse(plan.worthMoving(), "reduction " + plan.cutReduction());
      assertEquals(0, plan.moves(), "balanced already: nothing to move for");
      // From all in one partition (what DS-SMR does to the bank today): balance, no locality.
      Map<ObjId, GroupId> one = new HashMap<>();
      cur.keySet().forEach(id -> one.put(id, GroupId.valueOf("p0")));
      PlacementPlanner.Plan spread = plan(g, one, k);
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
        PlacementPlanner.Plan plan = plan(g, randomPlacement(n, parts(4), rnd), 4);
        System.out.println("sparse random n=" + n + " commands/object=" + per + ": " + summary(plan));
        assertFalse(plan.worthMoving(), "reduction " + plan.cutReduction() + " noise " + plan.noiseReduction());
        assertTrue(plan.imbalanceAfter() <= 0.10 + 1e-9, "imbalance " + plan.imbalanceAfter());
      }
    }
  }
}
