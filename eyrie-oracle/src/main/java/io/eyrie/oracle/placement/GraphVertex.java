package io.eyrie.oracle.placement;

import io.eyrie.core.ObjId;
import java.util.Arrays;

/**
 * One object of a {@link WorkloadGraph}: its raw access weight and its edges, stored at both ends
 * with the same raw weight. It owns what happens to the edges at one vertex: finding, adding and
 * removing one, growing its arrays up to the graph's edge bound, evicting the lightest edge of a
 * full vertex, and folding a decay into its weights.
 *
 * <p>{@link #estimatedBytes()} follows the per-vertex memory model of {@link WorkloadGraph}'s class
 * comment, but for the map's table slot, which the graph counts.
 */
final class GraphVertex {
  final ObjId id;
  double raw;
  GraphVertex[] nbr;
  double[] w;
  int deg;

  GraphVertex(ObjId id, int capacity) {
    this.id = id;
    this.nbr = new GraphVertex[capacity];
    this.w = new double[capacity];
  }

  int indexOf(GraphVertex v) {
    for (int i = 0; i < deg; i++) {
      if (nbr[i] == v) {
        return i;
      }
    }
    return -1;
  }

  /** Removes edge slot {@code i} here only (swap with the last). */
  void removeAt(int i) {
    deg--;
    nbr[i] = nbr[deg];
    w[i] = w[deg];
    nbr[deg] = null;
    w[deg] = 0;
  }

  /** Adds an edge here only; {@link #makeRoom} made room for it. */
  void append(GraphVertex to, double raw) {
    nbr[deg] = to;
    w[deg] = raw;
    deg++;
  }

  /**
   * Ensures this vertex can take one more edge: grows its arrays up to {@code maxEdges}, or else
   * evicts its lightest edge, at both ends.
   *
   * @param salt salts the ties between equally light edges (the graph's number of records)
   * @return whether an edge was evicted
   */
  boolean makeRoom(int maxEdges, long salt) {
    if (deg < nbr.length) {
      return false;
    }
    if (deg < maxEdges) {
      int cap = Math.min(maxEdges, nbr.length * 2);
      nbr = Arrays.copyOf(nbr, cap);
      w = Arrays.copyOf(w, cap);
      return false;
    }
    // Ties (common: many edges of one command's weight) go by a hash of the neighbour's id salted
    // with the number of records so far: deterministic, yet not always against the same ids (a
    // fixed order would strip the low ids of their edges and fake a structure).
    int lightest = 0;
    long lightestKey = tieKey(nbr[0], salt);
    for (int i = 1; i < deg; i++) {
      if (w[i] < w[lightest]) {
        lightest = i;
        lightestKey = tieKey(nbr[i], salt);
      } else if (w[i] == w[lightest]) {
        long key = tieKey(nbr[i], salt);
        if (key < lightestKey) {
          lightest = i;
          lightestKey = key;
        }
      }
    }
    GraphVertex other = nbr[lightest];
    other.removeAt(other.indexOf(this));
    removeAt(lightest);
    return true;
  }

  private static long tieKey(GraphVertex v, long salt) {
    long z = v.id.value() + salt * 0x9E3779B97F4A7C15L;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /** Removes this vertex's edges at its neighbours (not here); returns how many there were. */
  int detach() {
    for (int i = 0; i < deg; i++) {
      GraphVertex other = nbr[i];
      other.removeAt(other.indexOf(this));
    }
    return deg;
  }

  /**
   * Multiplies the weights by {@code s} and drops the edges whose weight falls below
   * {@code minWeight}, here only: both ends hold the same raw weight, so both ends make the same
   * decision. Returns the edges kept.
   */
  int fold(double s, double minWeight) {
    raw *= s;
    int kept = 0;
    for (int i = 0; i < deg; i++) {
      double weight = w[i] * s;
      if (weight >= minWeight) {
        nbr[kept] = nbr[i];
        w[kept] = weight;
        kept++;
      }
    }
    Arrays.fill(nbr, kept, deg, null);
    Arrays.fill(w, kept, deg, 0);
    deg = kept;
    return kept;
  }

  /** Returns an estimate of the heap this vertex takes with its map entry and id, in bytes. */
  long estimatedBytes() {
    return 32 + 16 + 40 + align(16 + 4L * nbr.length) + 16 + 8L * w.length;
  }

  private static long align(long bytes) {
    return (bytes + 7) & ~7L;
  }
}
