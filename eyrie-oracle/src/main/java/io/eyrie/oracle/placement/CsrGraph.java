package io.eyrie.oracle.placement;

import io.eyrie.core.ObjId;
import java.util.Arrays;

/**
 * One level of the planner's graph as arrays: compressed adjacency rows and two vertex weights
 * (objects, accesses), at the finest level or coarsened.
 */
final class CsrGraph {
  final int n;
  final int[] xadj;
  final int[] adj;
  final double[] ew;
  final double[] vc;
  final double[] va;
  /** For a finer level: the coarse vertex of each vertex (set when coarsened). */
  int[] cmap;

  CsrGraph(int n, int[] xadj, int[] adj, double[] ew, double[] vc, double[] va) {
    this.n = n;
    this.xadj = xadj;
    this.adj = adj;
    this.ew = ew;
    this.vc = vc;
    this.va = va;
  }

  int m() {
    return xadj[n] / 2;
  }

  /** Builds the finest level: vertex i is ids[i]; rows sorted by neighbour. */
  static CsrGraph of(WorkloadGraph graph, ObjId[] ids, double unseenWeight) {
    int n = ids.length;
    long[] keys = new long[n];
    for (int i = 0; i < n; i++) {
      keys[i] = ids[i].value();
    }
    double scale = graph.scale();
    int[] xadj = new int[n + 1];
    GraphVertex[] vs = new GraphVertex[n];
    double[] vc = new double[n];
    double[] va = new double[n];
    int total = 0;
    for (int i = 0; i < n; i++) {
      vs[i] = graph.vertex(ids[i]);
      vc[i] = 1;
      va[i] = vs[i] == null ? unseenWeight : vs[i].raw * scale;
      total += vs[i] == null ? 0 : vs[i].deg;
    }
    int[] adj = new int[total];
    double[] ew = new double[total];
    int pos = 0;
    for (int i = 0; i < n; i++) {
      xadj[i] = pos;
      GraphVertex v = vs[i];
      if (v == null) {
        continue;
      }
      int start = pos;
      for (int e = 0; e < v.deg; e++) {
        int j = Arrays.binarySearch(keys, v.nbr[e].id.value());
        if (j >= 0) {
          // insertion sort by neighbour index: rows are short (the graph's edge bound)
          int at = pos++;
          double w = v.w[e] * scale;
          while (at > start && adj[at - 1] > j) {
            adj[at] = adj[at - 1];
            ew[at] = ew[at - 1];
            at--;
          }
          adj[at] = j;
          ew[at] = w;
        }
      }
    }
    xadj[n] = pos;
    return new CsrGraph(n, xadj, Arrays.copyOf(adj, pos), Arrays.copyOf(ew, pos), vc, va);
  }

  double cut(int[] part) {
    double cut = 0;
    for (int v = 0; v < n; v++) {
      for (int e = xadj[v]; e < xadj[v + 1]; e++) {
        if (part[adj[e]] != part[v]) {
          cut += ew[e];
        }
      }
    }
    return cut / 2;
  }

  double totalEdgeWeight() {
    double sum = 0;
    for (double w : ew) {
      sum += w;
    }
    return sum / 2;
  }
}
