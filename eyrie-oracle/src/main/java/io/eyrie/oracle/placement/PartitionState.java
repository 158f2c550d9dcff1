package io.eyrie.oracle.placement;

import java.util.Arrays;

/**
 * The mutable partition of one level with its loads and bounds: the moves that {@link Balancer}
 * and {@link Refiner} make, and the checks they make before each.
 */
final class PartitionState {
  final CsrGraph g;
  final int[] part;
  final int k;
  final LoadBounds b;
  final double[] cnt;
  final double[] acc;
  final double[] conn;

  PartitionState(CsrGraph g, int[] part, int k, LoadBounds b) {
    this.g = g;
    this.part = part;
    this.k = k;
    this.b = b;
    double[][] l = LoadBounds.loads(g, part, k);
    this.cnt = l[0];
    this.acc = l[1];
    this.conn = new double[k];
  }

  /** Fills {@link #conn} with v's edge weight to each partition; returns v's total. */
  double connect(int v) {
    Arrays.fill(conn, 0);
    double total = 0;
    for (int e = g.xadj[v]; e < g.xadj[v + 1]; e++) {
      int p = part[g.adj[e]];
      if (p >= 0) {
        conn[p] += g.ew[e];
      }
      total += g.ew[e];
    }
    return total;
  }

  boolean over(int p) {
    return p < 0 || cnt[p] > b.hiC || acc[p] > b.hiA;
  }

  boolean under(int p) {
    return cnt[p] < b.loC || acc[p] < b.loA;
  }

  boolean fits(int p, int v) {
    return cnt[p] + g.vc[v] <= b.hiC && acc[p] + g.va[v] <= b.hiA;
  }

  /** Whether v may leave p without taking p below a bound it is not above. */
  boolean mayLeave(int p, int v) {
    if (p < 0) {
      return true;
    }
    boolean overC = cnt[p] > b.hiC;
    boolean overA = acc[p] > b.hiA;
    return (overC || cnt[p] - g.vc[v] >= b.loC) && (overA || acc[p] - g.va[v] >= b.loA);
  }

  /** Load relative to the average, for tie-breaks toward the emptier partition. */
  double relLoad(int p) {
    return cnt[p] / Math.max(b.avgC, 1e-300) + (b.avgA > 0 ? acc[p] / b.avgA : 0);
  }

  void move(int v, int to) {
    int from = part[v];
    if (from >= 0) {
      cnt[from] -= g.vc[v];
      acc[from] -= g.va[v];
    }
    cnt[to] += g.vc[v];
    acc[to] += g.va[v];
    part[v] = to;
  }
}
