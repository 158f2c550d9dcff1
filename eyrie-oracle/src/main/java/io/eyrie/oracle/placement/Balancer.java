package io.eyrie.oracle.placement;

import java.util.Comparator;
import java.util.PriorityQueue;

/**
 * Balancing of one level: brings every partition within its load bounds (assigning unassigned
 * vertices) by a priority queue of moves, best cut gain first, then by count-neutral swaps for
 * access load.
 */
final class Balancer {
  /** At most this many swaps per partition in {@link #swapAccess}. */
  static final int SWAPS_PER_PARTITION = 64;

  /** A queued move: vertex, target, gain, and the vertex's stamp when it was queued. */
  private record Cand(int v, int to, double gain, int stamp) {}

  private static final Comparator<Cand> BEST_FIRST =
      (x, y) -> x.gain != y.gain ? Double.compare(y.gain, x.gain) : Integer.compare(x.v, y.v);

  private Balancer() {}

  /** Brings every partition within bounds (assigning unassigned vertices), cutting little. */
  static void rebalance(CsrGraph g, int[] part, int k, LoadBounds b) {
    PartitionState s = new PartitionState(g, part, k, b);
    shed(s, true);
    shed(s, false);
    swapAccess(s);
  }

  /**
   * Count-neutral swaps for an access load the moves left out of bounds: moves fill partitions
   * by count first, and when the light vertices moved first a partition can end within its count
   * bound but over its access bound with nowhere to put a whole vertex (1 in 18 random instances
   * of PlannerQualityTest's spread case before this). While the partition with the most access
   * load or the one with the least is out of bounds, a vertex of the first is exchanged for a
   * lighter one of the second, of the same count, the pair chosen to shift about half their
   * difference. Edges are not considered: balance is a bound, the cut only an aim.
   */
  private static void swapAccess(PartitionState s) {
    CsrGraph g = s.g;
    if (!(s.b.avgA > 0)) {
      return;
    }
    for (int round = 0; round < SWAPS_PER_PARTITION * s.k; round++) {
      int hi = 0;
      int lo = 0;
      for (int p = 1; p < s.k; p++) {
        hi = s.acc[p] > s.acc[hi] ? p : hi;
        lo = s.acc[p] < s.acc[lo] ? p : lo;
      }
      double gap = s.acc[hi] - s.acc[lo];
      if (hi == lo || (s.acc[hi] <= s.b.hiA && s.acc[lo] >= s.b.loA) || !(gap > 0)) {
        return;
      }
      int light = -1;
      for (int v = 0; v < g.n; v++) {
        if (s.part[v] == lo && (light < 0 || g.va[v] < g.va[light])) {
          light = v;
        }
      }
      if (light < 0) {
        return;
      }
      double want = g.va[light] + gap / 2;
      int heavy = -1;
      for (int v = 0; v < g.n; v++) {
        double d = g.va[v] - g.va[light];
        if (s.part[v] == hi && g.vc[v] == g.vc[light] && d > 0 && d < gap
            && (heavy < 0 || Math.abs(g.va[v] - want) < Math.abs(g.va[heavy] - want))) {
          heavy = v;
        }
      }
      if (heavy < 0) {
        return;
      }
      s.move(heavy, lo);
      s.move(light, hi);
    }
  }

  /**
   * One balancing phase. With {@code fromOver}, moves vertices out of overloaded partitions (and
   * out of "unassigned") into partitions with room; otherwise moves vertices from partitions that
   * can spare them into underloaded ones. Best gain first; a moved vertex's neighbours are
   * re-queued with their new gains.
   */
  private static void shed(PartitionState s, boolean fromOver) {
    CsrGraph g = s.g;
    if (!fromOver && !anyUnder(s)) {
      return;
    }
    int[] stamp = new int[g.n];
    PriorityQueue<Cand> pq = new PriorityQueue<>(BEST_FIRST);
    for (int v = 0; v < g.n; v++) {
      offer(s, pq, v, stamp, fromOver);
    }
    while (!pq.isEmpty()) {
      Cand c = pq.poll();
      if (c.stamp != stamp[c.v]) {
        continue;
      }
      Cand now = candidate(s, c.v, stamp[c.v], fromOver);
      if (now == null) {
        continue;
      }
      if (now.to != c.to || now.gain != c.gain) {
        stamp[c.v]++;
        pq.add(new Cand(now.v, now.to, now.gain, stamp[c.v]));
        continue;
      }
      s.move(c.v, c.to);
      stamp[c.v]++;
      for (int e = g.xadj[c.v]; e < g.xadj[c.v + 1]; e++) {
        offer(s, pq, g.adj[e], stamp, fromOver);
      }
      if (!fromOver && !anyUnder(s)) {
        return;
      }
    }
  }

  private static boolean anyUnder(PartitionState s) {
    for (int p = 0; p < s.k; p++) {
      if (s.under(p)) {
        return true;
      }
    }
    return false;
  }

  private static void offer(PartitionState s, PriorityQueue<Cand> pq, int v, int[] stamp, boolean fromOver) {
    Cand c = candidate(s, v, stamp[v] + 1, fromOver);
    if (c != null) {
      stamp[v]++;
      pq.add(c);
    }
  }

  /** The best admissible balancing move of v now, or null. */
  private static Cand candidate(PartitionState s, int v, int stampValue, boolean fromOver) {
    CsrGraph g = s.g;
    int from = s.part[v];
    if (fromOver) {
      if (!s.over(from) || !s.mayLeave(from, v)) {
        return null;
      }
      // A vertex with no accesses does not help a partition that is over in accesses only.
      if (from >= 0 && s.cnt[from] <= s.b.hiC && g.va[v] <= 0) {
        return null;
      }
    } else {
      if (from < 0 || s.under(from) || !s.mayLeave(from, v)) {
        return null;
      }
    }
    s.connect(v);
    double own = from >= 0 ? s.conn[from] : 0;
    int best = -1;
    for (int t = 0; t < s.k; t++) {
      if (t == from || !s.fits(t, v)) {
        continue;
      }
      if (!fromOver && !s.under(t)) {
        continue;
      }
      if (!fromOver && s.cnt[t] >= s.b.loC && g.va[v] <= 0) {
        continue; // t lacks accesses only; this vertex brings none
      }
      if (best < 0 || s.conn[t] > s.conn[best]
          || s.conn[t] == s.conn[best] && s.relLoad(t) < s.relLoad(best)) {
        best = t;
      }
    }
    if (best < 0 && from < 0) {
      // Nowhere has room (only possible with bounds made tight by heavy vertices): least loaded.
      for (int t = 0; t < s.k; t++) {
        if (best < 0 || s.relLoad(t) < s.relLoad(best)) {
          best = t;
        }
      }
    }
    if (best < 0) {
      return null;
    }
    return new Cand(v, best, s.conn[best] - own, stampValue);
  }
}
