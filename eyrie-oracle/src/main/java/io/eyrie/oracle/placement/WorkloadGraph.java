package io.eyrie.oracle.placement;

import io.eyrie.core.ObjId;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * An undirected weighted graph of the objects that commands use together, fed by the commands
 * the oracle observes and decayed so that it follows a changing workload. A vertex's weight is
 * how much its object is accessed; an edge's weight is how much two objects are accessed together.
 * {@link PlacementPlanner} partitions it.
 *
 * <h2>What a command adds</h2>
 * {@link #record} adds the command's weight to each distinct object's access weight. Its objects
 * are connected as a <em>clique</em> with {@code weight / (n - 1)} per edge when it names at most
 * {@value #CLIQUE_LIMIT} objects, otherwise as a <em>star</em> from its first object with
 * {@code weight} per edge. Either way, cutting one object off from the others costs the command's
 * weight, which is what it costs to run it across partitions; the star bounds the work per command
 * to {@code n - 1} edge updates instead of {@code n(n - 1)/2}.
 *
 * <h2>Decay</h2>
 * {@link #decay} is lazy: the graph stores raw weights and one global scale, so a decay multiplies
 * the scale (O(1)) and a record adds {@code weight / scale}. When the scale has fallen below
 * 1/1024 a pass over the graph folds it into the raw weights and drops the vertices and edges
 * whose weight is below {@link #minWeight()}; so a decay costs O(1) except one decay in every
 * {@code ceil(ln 1024 / ln(1/factor))} (every 135 at factor 0.95), which costs O(V + E). Until
 * that pass, faded vertices and edges stay with their (tiny) weights.
 *
 * <h2>Bounded memory</h2>
 * At most {@link #maxVertices()} vertices: when a command brings new objects into a full graph,
 * the lightest eighth of the vertices (by weight, ties by id; the command's own objects are
 * spared) is evicted in one batch, which costs O(V log V) once per V/8 new vertices, so O(log V)
 * amortised per new vertex. At most {@link #maxEdgesPerVertex()} edges per vertex: a new edge at a
 * full vertex evicts that vertex's lightest edge (ties by a salted hash of the neighbour's id), at
 * both of its ends. New edges always get in, so a workload that changes is learnt; the price is churn at
 * vertices with more than that many partners of similar weight.
 *
 * <p>Memory per vertex (64-bit JVM, compressed references) is about {@code 128 + 12 c} bytes,
 * where {@code c} is the capacity of its edge arrays (the next power of two at or above its
 * degree, at least 4, at most the edge bound): a map entry (32), its table slot (~8), the id (16),
 * the vertex (40), two array headers (32) and 4 + 8 bytes per edge slot. With the defaults that is
 * at most about 512 bytes per object, 51 MB for 100,000 objects, and about 224 bytes for an
 * object with 8 partners. {@link #estimatedBytes()} adds it up; {@code WorkloadGraphTest} compares it
 * with a heap measurement.
 *
 * <h2>Determinism</h2>
 * The same sequence of calls yields the same graph, and every listing ({@link #vertices()},
 * {@link #neighbors}) is sorted by {@link ObjId}. Not thread-safe.
 */
public final class WorkloadGraph {
  /** The default bound on the number of vertices. */
  public static final int DEFAULT_MAX_VERTICES = 100_000;
  /** The default bound on the number of edges of one vertex. */
  public static final int DEFAULT_MAX_EDGES_PER_VERTEX = 32;
  /** The default weight below which decayed vertices and edges are dropped. */
  public static final double DEFAULT_MIN_WEIGHT = 1e-3;
  /** Commands on more objects than this are recorded as a star, not a clique. */
  public static final int CLIQUE_LIMIT = 8;

  /** The scale below which {@link #decay} folds the scale into the raw weights. */
  private static final double RENORMALISE_BELOW = 1.0 / 1024;
  private static final int INITIAL_EDGE_CAPACITY = 4;

  private final int maxVertices;
  private final int maxEdges;
  private final double minWeight;
  private final HashMap<ObjId, GraphVertex> vertices = new HashMap<>();
  private double scale = 1.0;
  private long edges;
  private long records;

  /** Creates a graph with the default bounds. */
  public WorkloadGraph() {
    this(DEFAULT_MAX_VERTICES, DEFAULT_MAX_EDGES_PER_VERTEX, DEFAULT_MIN_WEIGHT);
  }

  /**
   * Creates a graph.
   *
   * @param maxVertices the most vertices it holds, at least 2
   * @param maxEdgesPerVertex the most edges one vertex has, at least 1
   * @param minWeight the weight below which decayed vertices and edges are dropped, positive
   */
  public WorkloadGraph(int maxVertices, int maxEdgesPerVertex, double minWeight) {
    if (maxVertices < 2 || maxEdgesPerVertex < 1 || !(minWeight > 0) || Double.isInfinite(minWeight)) {
      throw new IllegalArgumentException("bad bounds: " + maxVertices + " " + maxEdgesPerVertex + " " + minWeight);
    }
    this.maxVertices = maxVertices;
    this.maxEdges = maxEdgesPerVertex;
    this.minWeight = minWeight;
  }

  /** Returns the most vertices this graph holds. */
  public int maxVertices() {
    return maxVertices;
  }

  /** Returns the most edges one vertex has. */
  public int maxEdgesPerVertex() {
    return maxEdges;
  }

  /** Returns the weight below which decayed vertices and edges are dropped. */
  public double minWeight() {
    return minWeight;
  }

  /**
   * Records a command on the given objects: adds {@code weight} to each distinct object's access
   * weight and connects them (a clique, or a star from the first object when there are more than
   * {@value #CLIQUE_LIMIT}; see the class comment). May evict the lightest vertices or edges.
   *
   * @param objects the objects the command uses; duplicates count once
   * @param weight how much the command counts, positive and finite (1 for one command)
   */
  public void record(Collection<ObjId> objects, double weight) {
    Objects.requireNonNull(objects, "objects");
    if (!(weight > 0) || Double.isInfinite(weight)) {
      throw new IllegalArgumentException("weight must be positive and finite: " + weight);
    }
    records++;
    List<ObjId> distinct = distinct(objects);
    if (distinct.size() > maxVertices) {
      distinct = distinct.subList(0, maxVertices); // keeps the bound even for an absurd command
    }
    int n = distinct.size();
    if (n == 0) {
      return;
    }
    int fresh = 0;
    for (ObjId id : distinct) {
      if (!vertices.containsKey(id)) {
        fresh++;
      }
    }
    if (vertices.size() + fresh > maxVertices) {
      // Evict a batch (an eighth) so that the O(V log V) selection is paid once per V/8 arrivals.
      int target = Math.max(0, Math.min(maxVertices - maxVertices / 8, maxVertices - fresh));
      evictLightest(vertices.size() - target, new HashSet<>(distinct));
    }
    GraphVertex[] vs = new GraphVertex[n];
    double raw = weight / scale;
    for (int i = 0; i < n; i++) {
      ObjId id = distinct.get(i);
      GraphVertex v = vertices.get(id);
      if (v == null) {
        v = new GraphVertex(id, Math.min(INITIAL_EDGE_CAPACITY, maxEdges));
        vertices.put(id, v);
      }
      v.raw += raw;
      vs[i] = v;
    }
    if (n == 1) {
      return;
    }
    if (n <= CLIQUE_LIMIT) {
      double each = raw / (n - 1);
      for (int i = 0; i < n; i++) {
        for (int j = i + 1; j < n; j++) {
          addEdge(vs[i], vs[j], each);
        }
      }
    } else {
      for (int j = 1; j < n; j++) {
        addEdge(vs[0], vs[j], raw);
      }
    }
  }

  private static List<ObjId> distinct(Collection<ObjId> objects) {
    List<ObjId> out = new ArrayList<>(objects.size());
    Set<ObjId> seen = objects.size() > 16 ? new HashSet<>() : null;
    for (ObjId id : objects) {
      Objects.requireNonNull(id, "object id");
      boolean dup = seen != null ? !seen.add(id) : out.contains(id);
      if (!dup) {
        out.add(id);
      }
    }
    return out;
  }

  private void addEdge(GraphVertex a, GraphVertex b, double raw) {
    int i = a.indexOf(b);
    if (i >= 0) {
      a.w[i] += raw;
      b.w[b.indexOf(a)] += raw;
      return;
    }
    if (a.makeRoom(maxEdges, records)) {
      edges--;
    }
    if (b.makeRoom(maxEdges, records)) {
      edges--;
    }
    a.append(b, raw);
    b.append(a, raw);
    edges++;
  }

  /** Evicts the {@code count} lightest vertices not in {@code spared}, ties by id. */
  private void evictLightest(int count, Set<ObjId> spared) {
    if (count <= 0) {
      return;
    }
    List<GraphVertex> candidates = new ArrayList<>(vertices.size());
    for (GraphVertex v : vertices.values()) {
      if (!spared.contains(v.id)) {
        candidates.add(v);
      }
    }
    candidates.sort((x, y) -> x.raw != y.raw ? Double.compare(x.raw, y.raw) : x.id.compareTo(y.id));
    for (int i = 0; i < count && i < candidates.size(); i++) {
      removeVertex(candidates.get(i));
    }
  }

  /**
   * Forgets an object (it was deleted) and its edges.
   *
   * @param id the object
   * @return whether the graph had it
   */
  public boolean remove(ObjId id) {
    GraphVertex v = vertices.get(id);
    if (v == null) {
      return false;
    }
    removeVertex(v);
    return true;
  }

  private void removeVertex(GraphVertex v) {
    edges -= v.detach();
    vertices.remove(v.id);
  }

  /**
   * Multiplies every weight by {@code factor}; O(1) amortised (see the class comment).
   *
   * @param factor in (0, 1]
   */
  public void decay(double factor) {
    if (!(factor > 0 && factor <= 1)) {
      throw new IllegalArgumentException("decay factor must be in (0, 1]: " + factor);
    }
    scale *= factor;
    if (scale < RENORMALISE_BELOW) {
      renormalise();
    }
  }

  /** Folds the scale into the raw weights and drops what fell below the minimum weight. */
  private void renormalise() {
    double s = scale;
    scale = 1.0;
    List<GraphVertex> faded = new ArrayList<>();
    long halfEdges = 0;
    for (GraphVertex v : vertices.values()) {
      halfEdges += v.fold(s, minWeight);
      if (v.raw < minWeight) {
        faded.add(v);
      }
    }
    edges = halfEdges / 2;
    for (GraphVertex v : faded) {
      removeVertex(v);
    }
  }

  /** Returns the number of vertices. */
  public int vertexCount() {
    return vertices.size();
  }

  /** Returns the number of (undirected) edges. */
  public long edgeCount() {
    return edges;
  }

  /** Returns whether the graph has a vertex for the object. */
  public boolean contains(ObjId id) {
    return vertices.containsKey(id);
  }

  /**
   * Returns an object's access weight.
   *
   * @param id the object
   * @return its weight, 0 if the graph does not have it
   */
  public double weight(ObjId id) {
    GraphVertex v = vertices.get(id);
    return v == null ? 0 : v.raw * scale;
  }

  /**
   * Returns the weight of the edge between two objects.
   *
   * @param a one object
   * @param b the other
   * @return the edge's weight, 0 if there is none
   */
  public double edgeWeight(ObjId a, ObjId b) {
    GraphVertex va = vertices.get(a);
    GraphVertex vb = vertices.get(b);
    if (va == null || vb == null) {
      return 0;
    }
    int i = va.indexOf(vb);
    return i < 0 ? 0 : va.w[i] * scale;
  }

  /** Returns the vertices, ascending. */
  public List<ObjId> vertices() {
    List<ObjId> ids = new ArrayList<>(vertices.keySet());
    Collections.sort(ids);
    return ids;
  }

  /**
   * Returns an object's neighbours and the weights of its edges to them.
   *
   * @param id the object
   * @return the neighbours, ascending; empty if the graph does not have it
   */
  public SortedMap<ObjId, Double> neighbors(ObjId id) {
    TreeMap<ObjId, Double> out = new TreeMap<>();
    GraphVertex v = vertices.get(id);
    if (v != null) {
      for (int i = 0; i < v.deg; i++) {
        out.put(v.nbr[i].id, v.w[i] * scale);
      }
    }
    return out;
  }

  /** Returns the sum of all edge weights. */
  public double totalEdgeWeight() {
    double sum = 0;
    for (ObjId id : vertices()) {
      GraphVertex v = vertices.get(id);
      for (int i = 0; i < v.deg; i++) {
        sum += v.w[i];
      }
    }
    return sum / 2 * scale;
  }

  /**
   * Returns an estimate of the heap this graph uses, in bytes (see the class comment for the
   * per-vertex model).
   */
  public long estimatedBytes() {
    long bytes = 64 + 4L * tableLength(vertices.size());
    for (GraphVertex v : vertices.values()) {
      bytes += v.estimatedBytes();
    }
    return bytes;
  }

  private static long tableLength(int size) {
    long needed = (long) Math.ceil(size / 0.75);
    long len = 16;
    while (len < needed) {
      len <<= 1;
    }
    return len;
  }

  // For the planner (same package): the raw structures, read only.

  /** Returns the vertex of an object, or null. */
  GraphVertex vertex(ObjId id) {
    return vertices.get(id);
  }

  /** Returns the factor that turns raw weights into weights. */
  double scale() {
    return scale;
  }
}
