package io.eyrie.oracle.placement;

/**
 * Refinement of one level: size-constrained label propagation, which only takes moves that
 * strictly reduce the cut and keep both partitions within bounds.
 */
final class Refiner {
  /** The most refinement sweeps per level. */
  private static final int MAX_SWEEPS = 12;

  private Refiner() {}

  /**
   * Size-constrained label propagation: sweeps in index order, moving a vertex to the partition
   * it is most connected to when that strictly reduces the cut and keeps both within bounds.
   */
  static void refine(CsrGraph g, int[] part, int k, LoadBounds b) {
    PartitionState s = new PartitionState(g, part, k, b);
    for (int sweep = 0; sweep < MAX_SWEEPS; sweep++) {
      int moved = 0;
      for (int v = 0; v < g.n; v++) {
        if (g.xadj[v] == g.xadj[v + 1]) {
          continue;
        }
        int from = part[v];
        double total = s.connect(v);
        if (s.conn[from] == total || !s.mayLeave(from, v)) {
          continue; // interior vertex, or its partition cannot spare it
        }
        int best = -1;
        double bestGain = 1e-9 * total; // strictly positive: ties stay
        for (int t = 0; t < k; t++) {
          if (t == from || !s.fits(t, v)) {
            continue;
          }
          double gain = s.conn[t] - s.conn[from];
          if (gain > bestGain || best >= 0 && gain == bestGain && s.relLoad(t) < s.relLoad(best)) {
            best = t;
            bestGain = gain;
          }
        }
        if (best >= 0) {
          s.move(v, best);
          moved++;
        }
      }
      if (moved == 0) {
        return;
      }
    }
  }
}
