package io.eyrie.oracle.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.ObjId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SortedMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The workload graph: what a command adds, decay, bounds, removal. Replay with -Deyrie.seed=N. */
@Timeout(30)
class WorkloadGraphTest {
  static ObjId o(long v) {
    return ObjId.valueOf(v);
  }

  static List<ObjId> ids(long... vs) {
    List<ObjId> out = new ArrayList<>();
    for (long v : vs) {
      out.add(o(v));
    }
    return out;
  }

  @Test
  void aSmallCommandIsACliqueWithItsWeightSharedPerEdge() {
    WorkloadGraph g = new WorkloadGraph();
    g.record(ids(3, 1, 2, 1), 1.0); // the duplicate counts once
    assertEquals(3, g.vertexCount());
    assertEquals(3, g.edgeCount());
    for (long v = 1; v <= 3; v++) {
      assertEquals(1.0, g.weight(o(v)), 1e-12);
    }
    assertEquals(0.5, g.edgeWeight(o(1), o(2)), 1e-12);
    assertEquals(0.5, g.edgeWeight(o(3), o(2)), 1e-12);
    assertEquals(List.of(o(1), o(2), o(3)), g.vertices());
    g.record(ids(1, 2), 2.0);
    assertEquals(2.5, g.edgeWeight(o(2), o(1)), 1e-12);
    assertEquals(3.0, g.weight(o(1)), 1e-12);
    assertEquals(1.0, g.weight(o(3)), 1e-12);
    assertEquals(3.5, g.totalEdgeWeight(), 1e-12);
    assertThrows(IllegalArgumentException.class, () -> g.record(ids(1), 0));
  }

  @Test
  void aLargeCommandIsAStarFromItsFirstObject() {
    WorkloadGraph g = new WorkloadGraph();
    List<ObjId> objs = new ArrayList<>();
    for (long v = 100; v > 100 - (WorkloadGraph.CLIQUE_LIMIT + 2); v--) {
      objs.add(o(v));
    }
    g.record(objs, 1.0);
    assertEquals(objs.size() - 1, g.edgeCount());
    assertEquals(objs.size() - 1, g.neighbors(o(100)).size());
    assertEquals(1.0, g.edgeWeight(o(100), o(95)), 1e-12);
    assertEquals(0.0, g.edgeWeight(o(99), o(95)), 0.0);
    assertEquals(1, g.neighbors(o(95)).size());
  }

  @Test
  void decayIsLazyExactAndDropsWhatFades() {
    WorkloadGraph g = new WorkloadGraph(1000, 32, 1e-3);
    g.record(ids(1, 2), 1.0);
    for (int i = 0; i < 5; i++) {
      g.decay(0.5);
    }
    assertEquals(1.0 / 32, g.weight(o(1)), 1e-15);
    g.record(ids(2, 3), 1.0); // recorded at the current scale: full weight
    assertEquals(1.0, g.edgeWeight(o(2), o(3)), 1e-12);
    assertEquals(1.0 / 32, g.edgeWeight(o(1), o(2)), 1e-15);
    // The 11th halving takes the scale below 2^-10: the pass drops object 1 and edge 1-2 (2^-11,
    // below 1e-3) and keeps object 2 and edge 2-3 (about 0.016); decay further and everything goes.
    for (int i = 0; i < 10; i++) {
      g.decay(0.5);
    }
    assertFalse(g.contains(o(1)));
    assertEquals(0, g.edgeWeight(o(1), o(2)));
    assertEquals(1, g.edgeCount());
    assertEquals(32.0 / 32768, g.edgeWeight(o(2), o(3)), 1e-15);
    for (int i = 0; i < 20; i++) {
      g.decay(0.5);
    }
    assertEquals(0, g.vertexCount());
    assertEquals(0, g.edgeCount());
    assertThrows(IllegalArgumentException.class, () -> g.decay(0));
    assertThrows(IllegalArgumentException.class, () -> g.decay(1.5));
  }

  @Test
  void removeForgetsTheObjectAndItsEdges() {
    WorkloadGraph g = new WorkloadGraph();
    g.record(ids(1, 2, 3), 1.0);
    g.record(ids(3, 4), 1.0);
    assertEquals(4, g.edgeCount());
    assertTrue(g.remove(o(3)));
    assertFalse(g.remove(o(3)));
    assertFalse(g.contains(o(3)));
    assertEquals(1, g.edgeCount());
    assertFalse(g.neighbors(o(4)).containsKey(o(3)));
    assertEquals(Map.of(o(2), 0.5), g.neighbors(o(1)));
    assertTrue(g.neighbors(o(4)).isEmpty());
  }

  @Test
  void boundsHoldUnderRandomTrafficAndTheLightestGo() {
    long seed = Long.getLong("eyrie.seed", System.nanoTime());
    System.out.println("WorkloadGraphTest.bounds seed=" + seed);
    Random rnd = new Random(seed);
    int maxV = 200;
    int maxE = 5;
    WorkloadGraph g = new WorkloadGraph(maxV, maxE, 1e-3);
    // Heavy, often-used objects 0..9 first; they must survive a flood of light newcomers.
    for (int i = 0; i < 50; i++) {
      g.record(ids(rnd.nextInt(10), rnd.nextInt(10)), 5.0);
    }
    for (int i = 0; i < 20_000; i++) {
      int n = 1 + rnd.nextInt(12);
      List<ObjId> objs = new ArrayList<>();
      for (int j = 0; j < n; j++) {
        objs.add(o(10 + rnd.nextInt(5000)));
      }
      g.record(objs, 0.1);
      if (i % 97 == 0) {
        g.decay(0.999);
      }
      assertTrue(g.vertexCount() <= maxV, "vertices " + g.vertexCount());
      if (i % 500 == 0) {
        checkConsistent(g, maxE);
      }
    }
    checkConsistent(g, maxE);
    for (long v = 0; v < 10; v++) {
      assertTrue(g.contains(o(v)), "heavy object " + v + " evicted");
    }
  }

  /** Edges symmetric, degrees within the bound, edge count = half the degree sum. */
  static void checkConsistent(WorkloadGraph g, int maxE) {
    long degrees = 0;
    for (ObjId v : g.vertices()) {
      SortedMap<ObjId, Double> nb = g.neighbors(v);
      assertTrue(nb.size() <= maxE, v + " has " + nb.size() + " edges");
      degrees += nb.size();
      for (Map.Entry<ObjId, Double> e : nb.entrySet()) {
        assertTrue(g.contains(e.getKey()), "dangling edge " + v + "-" + e.getKey());
        assertEquals(e.getValue(), g.neighbors(e.getKey()).get(v), "asymmetric " + v + "-" + e.getKey());
      }
    }
    assertEquals(degrees / 2, g.edgeCount());
  }

  @Test
  void memoryEstimateFollowsTheDocumentedModel() {
    WorkloadGraph g = new WorkloadGraph();
    g.record(ids(1), 1.0); // no edges: capacity 4
    long one = g.estimatedBytes();
    // 32 entry + 16 id + 40 vertex + (16 + 16) refs + (16 + 32) weights = 168, plus the table
    assertTrue(one >= 168 && one <= 168 + 64 + 4 * 16, "estimate " + one);
    for (int i = 2; i < 200; i++) {
      g.record(ids(1, i), 1.0);
    }
    // object 1 is full (32 edges): 128 + 12 * 32 = 512 bytes
    long perVertexMax = 128 + 12L * WorkloadGraph.DEFAULT_MAX_EDGES_PER_VERTEX;
    assertTrue(g.estimatedBytes() <= g.vertexCount() * perVertexMax + 64 + 4L * 512);
  }
}
