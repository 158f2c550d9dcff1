package io.eyrie.oracle.placement;

import java.util.Arrays;

/**
 * The renaming of a fresh partition's labels to overlap the current placement most, so that a
 * plan computed without regard to where objects are moves few of them.
 */
final class Relabel {
  private Relabel() {}

  /**
   * Renames the partitions of {@code fresh} so that they overlap the current placement most
   * (greedy on the overlap matrix, ties by index), which keeps the moves down.
   */
  static int[] relabel(int[] fresh, int[] cur, int k) {
    long[][] overlap = new long[k][k];
    for (int v = 0; v < fresh.length; v++) {
      if (cur[v] >= 0) {
        overlap[fresh[v]][cur[v]]++;
      }
    }
    int[] rename = new int[k];
    Arrays.fill(rename, -1);
    boolean[] taken = new boolean[k];
    for (int round = 0; round < k; round++) {
      int bi = -1;
      int bj = -1;
      for (int i = 0; i < k; i++) {
        if (rename[i] >= 0) {
          continue;
        }
        for (int j = 0; j < k; j++) {
          if (!taken[j] && (bi < 0 || overlap[i][j] > overlap[bi][bj])) {
            bi = i;
            bj = j;
          }
        }
      }
      rename[bi] = bj;
      taken[bj] = true;
    }
    int[] out = new int[fresh.length];
    for (int v = 0; v < fresh.length; v++) {
      out[v] = rename[fresh[v]];
    }
    return out;
  }
}
