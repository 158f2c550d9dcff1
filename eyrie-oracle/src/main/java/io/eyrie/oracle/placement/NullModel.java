package io.eyrie.oracle.placement;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * The null model against which locality is judged: the graph with its edges rewired at random,
 * which keeps the vertices and (nearly) their weighted degrees but no structure.
 */
final class NullModel {
  private NullModel() {}

  /**
   * The null model: the same vertices and (nearly) the same weighted degrees, edges rewired at
   * random (every edge's two ends are shuffled among all edge ends; self-loops dropped, parallel
   * edges merged). Whatever cut reduction the planner finds there is noise, not locality.
   */
  static CsrGraph rewired(CsrGraph g) {
    int m2 = g.xadj[g.n];
    int[] stubs = new int[m2];
    double[] weights = new double[m2 / 2];
    int s = 0;
    int e2 = 0;
    for (int v = 0; v < g.n; v++) {
      for (int e = g.xadj[v]; e < g.xadj[v + 1]; e++) {
        int u = g.adj[e];
        if (v < u) {
          stubs[s++] = v;
          stubs[s++] = u;
          weights[e2++] = g.ew[e];
        }
      }
    }
    SplittableRandom rnd = new SplittableRandom(Multilevel.COARSEN_SEED * 31 + g.n);
    for (int i = s - 1; i > 0; i--) {
      int j = rnd.nextInt(i + 1);
      int t = stubs[i];
      stubs[i] = stubs[j];
      stubs[j] = t;
    }
    int[] deg = new int[g.n];
    for (int i = 0; i + 1 < s; i += 2) {
      if (stubs[i] != stubs[i + 1]) {
        deg[stubs[i]]++;
        deg[stubs[i + 1]]++;
      }
    }
    int[] xadj = new int[g.n + 1];
    for (int v = 0; v < g.n; v++) {
      xadj[v + 1] = xadj[v] + deg[v];
    }
    int[] fill = Arrays.copyOf(xadj, g.n);
    int[] adj = new int[xadj[g.n]];
    double[] ew = new double[xadj[g.n]];
    for (int i = 0; i + 1 < s; i += 2) {
      int a = stubs[i];
      int b = stubs[i + 1];
      if (a != b) {
        adj[fill[a]] = b;
        ew[fill[a]++] = weights[i / 2];
        adj[fill[b]] = a;
        ew[fill[b]++] = weights[i / 2];
      }
    }
    // Merge parallel edges: rows sorted by neighbour, equal neighbours summed.
    int[] nx = new int[g.n + 1];
    int pos = 0;
    for (int v = 0; v < g.n; v++) {
      int start = pos;
      for (int e = xadj[v]; e < xadj[v + 1]; e++) {
        int at = pos;
        while (at > start && adj[at - 1] > adj[e]) {
          at--;
        }
        if (at > start && adj[at - 1] == adj[e]) {
          ew[at - 1] += ew[e];
          continue;
        }
        int u = adj[e];
        double w = ew[e];
        System.arraycopy(adj, at, adj, at + 1, pos - at);
        System.arraycopy(ew, at, ew, at + 1, pos - at);
        adj[at] = u;
        ew[at] = w;
        pos++;
      }
      nx[v + 1] = pos;
    }
    return new CsrGraph(g.n, nx, Arrays.copyOf(adj, pos), Arrays.copyOf(ew, pos), g.vc, g.va);
  }
}
