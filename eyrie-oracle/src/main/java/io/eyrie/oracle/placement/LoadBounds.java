package io.eyrie.oracle.placement;

/**
 * The load bounds of one level, in objects (c) and accesses (a), and the load measures checked
 * against them: the loads of a partition, whether it is balanced, and its imbalance.
 */
final class LoadBounds {
  final double avgC;
  final double avgA;
  final double hiC;
  final double loC;
  final double hiA;
  final double loA;

  LoadBounds(CsrGraph g, int k, double eps) {
    double totC = 0;
    double totA = 0;
    double maxC = 0;
    double maxA = 0;
    for (int v = 0; v < g.n; v++) {
      totC += g.vc[v];
      totA += g.va[v];
      maxC = Math.max(maxC, g.vc[v]);
      maxA = Math.max(maxA, g.va[v]);
    }
    avgC = totC / k;
    avgA = totA / k;
    if (maxC <= 1) {
      // Whole objects: the tightest integer bounds that every k can meet.
      hiC = Math.max(Math.floor((1 + eps) * avgC), Math.ceil(avgC));
      loC = Math.min(Math.ceil((1 - eps) * avgC), Math.floor(avgC));
    } else {
      hiC = Math.max(Math.floor((1 + eps) * avgC), avgC + maxC);
      loC = Math.min(Math.ceil((1 - eps) * avgC), avgC - maxC);
    }
    if (totA > 0) {
      hiA = Math.max((1 + eps) * avgA, avgA + maxA);
      loA = Math.min((1 - eps) * avgA, avgA - maxA);
    } else {
      hiA = Double.POSITIVE_INFINITY;
      loA = Double.NEGATIVE_INFINITY;
    }
  }

  /** The loads of each partition: {objects, accesses}; unassigned vertices (-1) count nowhere. */
  static double[][] loads(CsrGraph g, int[] part, int k) {
    double[] cnt = new double[k];
    double[] acc = new double[k];
    for (int v = 0; v < g.n; v++) {
      if (part[v] >= 0) {
        cnt[part[v]] += g.vc[v];
        acc[part[v]] += g.va[v];
      }
    }
    return new double[][] {cnt, acc};
  }

  /** Whether every vertex is assigned and every partition's loads are within {@code b}. */
  static boolean isBalanced(CsrGraph g, int[] part, int k, LoadBounds b) {
    double[][] l = loads(g, part, k);
    for (int v = 0; v < g.n; v++) {
      if (part[v] < 0) {
        return false;
      }
    }
    for (int p = 0; p < k; p++) {
      if (l[0][p] > b.hiC || l[0][p] < b.loC || l[1][p] > b.hiA || l[1][p] < b.loA) {
        return false;
      }
    }
    return true;
  }

  /** The largest relative deviation of a partition's load from the average, both dimensions. */
  static double imbalance(CsrGraph g, int[] part, int k) {
    double[][] l = loads(g, part, k);
    double totC = 0;
    double totA = 0;
    for (int v = 0; v < g.n; v++) {
      totC += g.vc[v];
      totA += g.va[v];
    }
    double worst = 0;
    for (int p = 0; p < k; p++) {
      if (totC > 0) {
        worst = Math.max(worst, Math.abs(l[0][p] - totC / k) / (totC / k));
      }
      if (totA > 0) {
        worst = Math.max(worst, Math.abs(l[1][p] - totA / k) / (totA / k));
      }
    }
    return worst;
  }
}
