package io.eyrie.oracle.placement;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The multilevel stages: coarsening by heavy-edge matching, a fresh partition of the coarsest
 * graph projected back with balancing and refinement at every level, and the V-cycle that
 * improves a given partition.
 */
final class Multilevel {
  /** How many initial partitions of the coarsest graph are tried. */
  private static final int INITIAL_TRIES = 16;
  /** How many of the best coarsest partitions are projected back to the finest level. */
  private static final int PROJECTED = 2;
  /** About how many objects a vertex of the coarsest graph stands for, at most. */
  private static final int COARSEST_OBJECTS = 25;
  /** The seed of every random choice of the planner (matching order, initial seeds, null model). */
  static final long COARSEN_SEED = 0x5eed_0f_e7e1L;

  private final double balance;

  /** A multilevel partitioner whose loads stay within {@code balance} of the average. */
  Multilevel(double balance) {
    this.balance = balance;
  }

  /** A fresh balanced partition of the finest level, ignoring where objects are now. */
  int[] partition(CsrGraph fine, int k) {
    List<CsrGraph> levels = new ArrayList<>();
    levels.add(fine);
    // Clusters of at most a few dozen objects: deeper coarsening mixes communities (a sparse graph
    // with a quarter of its edges across communities lost its structure at 100 clusters).
    int stopAt = Math.max(Math.max(20 * k, 100), fine.n / COARSEST_OBJECTS);
    LoadBounds fb = new LoadBounds(fine, k, balance);
    double capC = Math.max(1.5 * fb.avgC * k / stopAt, 1);
    double capA = 1.5 * fb.avgA * k / stopAt;
    CsrGraph g = fine;
    while (g.n > stopAt) {
      CsrGraph c = coarsen(g, capC, capA + maxOf(fine.va), null);
      if (c.n > 0.95 * g.n) {
        g.cmap = null;
        break;
      }
      levels.add(c);
      g = c;
    }
    // The best few coarsest partitions are each projected back: the coarsest cut ranks them only
    // roughly, and which one ends best is only known at the finest level.
    int[] best = null;
    double bestCut = Double.POSITIVE_INFINITY;
    for (int[] start : initial(g, k, new LoadBounds(g, k, balance))) {
      int[] part = projectDown(levels, start, k);
      double cut = fine.cut(part);
      if (best == null
          || cut < bestCut && LoadBounds.isBalanced(fine, part, k, fb) == LoadBounds.isBalanced(fine, best, k, fb)
          || LoadBounds.isBalanced(fine, part, k, fb) && !LoadBounds.isBalanced(fine, best, k, fb)) {
        best = part;
        bestCut = cut;
      }
    }
    return best;
  }

  /**
   * Partitions the coarsest graph: {@value #INITIAL_TRIES} greedy region growings (a quarter of
   * that above 1000 vertices; the first from nothing, the others from k seed vertices drawn with
   * a fixed seed), each refined; returns the {@value #PROJECTED} best (balanced first, then by
   * cut). Cheap (the coarsest graph is small), and it is where a greedy start goes wrong most
   * (two communities in one partition).
   */
  private static List<int[]> initial(CsrGraph g, int k, LoadBounds b) {
    SplittableRandom rnd = new SplittableRandom(COARSEN_SEED + 7 * g.n);
    List<int[]> parts = new ArrayList<>();
    List<double[]> rank = new ArrayList<>(); // {unbalanced ? 1 : 0, cut, attempt}
    int tries = g.n <= 1000 ? INITIAL_TRIES : INITIAL_TRIES / 4;
    for (int attempt = 0; attempt < tries; attempt++) {
      int[] part = new int[g.n];
      Arrays.fill(part, -1);
      if (attempt > 0 && g.n >= k) {
        for (int p = 0; p < k; p++) {
          int v;
          do {
            v = rnd.nextInt(g.n);
          } while (part[v] >= 0);
          part[v] = p;
        }
      }
      Balancer.rebalance(g, part, k, b);
      Refiner.refine(g, part, k, b);
      parts.add(part);
      rank.add(new double[] {LoadBounds.isBalanced(g, part, k, b) ? 0 : 1, g.cut(part), attempt});
    }
    rank.sort((x, y) -> x[0] != y[0] ? Double.compare(x[0], y[0])
        : x[1] != y[1] ? Double.compare(x[1], y[1]) : Double.compare(x[2], y[2]));
    List<int[]> out = new ArrayList<>();
    for (int i = 0; i < Math.min(PROJECTED, rank.size()); i++) {
      out.add(parts.get((int) rank.get(i)[2]));
    }
    return out;
  }

  private static double maxOf(double[] a) {
    double m = 0;
    for (double x : a) {
      m = Math.max(m, x);
    }
    return m;
  }

  /**
   * One V-cycle from a partition: coarsens with matching restricted to vertices of the same
   * partition (so the partition carries over to every level unchanged), then refines from the
   * coarsest level back to the finest. Coarse levels move whole clusters, which single-object
   * refinement cannot (it stalls when each object of a misplaced group has most of its partners
   * where it is). Returns the better of the result and the start.
   */
  int[] vcycle(CsrGraph fine, int[] start, int k) {
    List<CsrGraph> levels = new ArrayList<>();
    List<int[]> parts = new ArrayList<>();
    levels.add(fine);
    parts.add(start.clone());
    int stopAt = Math.max(20 * k, 100);
    LoadBounds fb = new LoadBounds(fine, k, balance);
    double capC = Math.max(1.5 * fb.avgC * k / stopAt, 1);
    double capA = 1.5 * fb.avgA * k / stopAt + maxOf(fine.va);
    CsrGraph g = fine;
    while (g.n > stopAt) {
      int[] part = parts.get(parts.size() - 1);
      CsrGraph c = coarsen(g, capC, capA, part);
      if (c.n > 0.95 * g.n) {
        break;
      }
      int[] cp = new int[c.n];
      for (int v = 0; v < g.n; v++) {
        cp[g.cmap[v]] = part[v];
      }
      levels.add(c);
      parts.add(cp);
      g = c;
    }
    int[] part = parts.get(parts.size() - 1);
    LoadBounds cb = new LoadBounds(g, k, balance);
    Balancer.rebalance(g, part, k, cb);
    Refiner.refine(g, part, k, cb);
    part = projectDown(levels, part, k);
    boolean startBalanced = LoadBounds.isBalanced(fine, start, k, fb);
    if (LoadBounds.isBalanced(fine, part, k, fb) && (!startBalanced || fine.cut(part) < fine.cut(start))) {
      return part;
    }
    return start;
  }

  /** Heavy-edge matching (within a partition if {@code within} is given), then contraction. */
  static CsrGraph coarsen(CsrGraph g, double capC, double capA, int[] within) {
    int n = g.n;
    int[] match = new int[n];
    Arrays.fill(match, -1);
    int[] order = new int[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
    }
    SplittableRandom rnd = new SplittableRandom(COARSEN_SEED ^ n);
    for (int i = n - 1; i > 0; i--) {
      int j = rnd.nextInt(i + 1);
      int t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    int lonely = -1; // an unmatched vertex without edges, waiting for a partner
    for (int v : order) {
      if (match[v] >= 0) {
        continue;
      }
      int best = -1;
      double bw = 0;
      for (int e = g.xadj[v]; e < g.xadj[v + 1]; e++) {
        int u = g.adj[e];
        if (match[u] >= 0 || u == v || g.vc[v] + g.vc[u] > capC || g.va[v] + g.va[u] > capA
            || within != null && within[u] != within[v]) {
          continue;
        }
        if (best < 0 || g.ew[e] > bw || g.ew[e] == bw && u < best) {
          best = u;
          bw = g.ew[e];
        }
      }
      if (best < 0 && g.xadj[v] == g.xadj[v + 1]) {
        if (lonely >= 0 && g.vc[v] + g.vc[lonely] <= capC && g.va[v] + g.va[lonely] <= capA
            && (within == null || within[lonely] == within[v])) {
          best = lonely;
          lonely = -1;
        } else {
          lonely = v;
        }
      }
      if (best >= 0) {
        match[v] = best;
        match[best] = v;
      } else {
        match[v] = v;
      }
    }
    if (lonely >= 0) {
      match[lonely] = lonely;
    }
    int[] cmap = new int[n];
    Arrays.fill(cmap, -1);
    int nc = 0;
    for (int v = 0; v < n; v++) {
      if (cmap[v] < 0) {
        cmap[v] = nc;
        cmap[match[v]] = nc;
        nc++;
      }
    }
    int[] xadj = new int[nc + 1];
    int[] adj = new int[g.adj.length];
    double[] ew = new double[g.adj.length];
    double[] vc = new double[nc];
    double[] va = new double[nc];
    int[] slot = new int[nc];
    Arrays.fill(slot, -1);
    int pos = 0;
    int c = 0;
    for (int v = 0; v < n; v++) {
      if (cmap[v] != c) {
        continue; // not the first member of its cluster
      }
      xadj[c] = pos;
      int start = pos;
      int u = match[v];
      for (int member : u == v ? new int[] {v} : new int[] {v, u}) {
        vc[c] += g.vc[member];
        va[c] += g.va[member];
        for (int e = g.xadj[member]; e < g.xadj[member + 1]; e++) {
          int cu = cmap[g.adj[e]];
          if (cu == c) {
            continue;
          }
          if (slot[cu] >= start) {
            ew[slot[cu]] += g.ew[e];
          } else {
            slot[cu] = pos;
            adj[pos] = cu;
            ew[pos] = g.ew[e];
            pos++;
          }
        }
      }
      c++;
    }
    xadj[nc] = pos;
    g.cmap = cmap;
    return new CsrGraph(nc, xadj, Arrays.copyOf(adj, pos), Arrays.copyOf(ew, pos), vc, va);
  }

  /**
   * Projects a partition of the coarsest level ({@code levels}' last) back to the finest (the
   * first), rebalancing and refining at every level on the way.
   */
  private int[] projectDown(List<CsrGraph> levels, int[] coarsest, int k) {
    int[] part = coarsest;
    for (int l = levels.size() - 2; l >= 0; l--) {
      CsrGraph f = levels.get(l);
      int[] fp = new int[f.n];
      for (int v = 0; v < f.n; v++) {
        fp[v] = part[f.cmap[v]];
      }
      part = fp;
      LoadBounds bl = new LoadBounds(f, k, balance);
      Balancer.rebalance(f, part, k, bl);
      Refiner.refine(f, part, k, bl);
    }
    return part;
  }
}
