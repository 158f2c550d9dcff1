package io.eyrie.oracle;

import io.eyrie.core.ObjId;
import io.eyrie.core.protocol.Locations;
import io.eyrie.multicast.GroupId;
import io.eyrie.oracle.placement.PlacementPlanner;
import io.eyrie.oracle.placement.WorkloadGraph;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The oracle's {@link OracleStateMachine.Placement#GRAPH} rule: a workload graph learned from
 * the consults this replica answers, a balanced plan of it recomputed in the background, and
 * targets for multi-partition commands taken from the plan.
 *
 * <p>None of this is replicated, and it need not be: consults are read-only queries answered by
 * the oracle's leader, a target is only a hint (the move that follows is an ordinary
 * linearizable move), and a new leader learns the workload again. The consult path only queues
 * the command's objects; the graph, the decay and the planner run on one background thread, so
 * a consult never waits for a plan and the group's lock is never held while planning.
 *
 * <p>When the plan says the workload has no locality worth moving for
 * ({@link PlacementPlanner.Plan#worthMoving()}), the target is {@code null}: the client then runs
 * the command with S-SMR on the partitions that hold its objects instead of gathering them,
 * which would only move objects back and forth.
 */
final class GraphPlacement implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(GraphPlacement.class);
  /** How often a new plan may be computed while plans move objects. */
  static final long PLAN_INTERVAL_NANOS = 1_000_000_000L;
  /**
   * The longest interval between plans: each plan that moves nothing doubles the interval up
   * to this, so a converged placement stops paying for planning every second (measured: 40-60 ms
   * of CPU per plan of Chirper's 1000 users); a plan that moves objects, or a change of the
   * partitions, brings it back to {@link #PLAN_INTERVAL_NANOS}.
   */
  static final long MAX_PLAN_INTERVAL_NANOS = 8_000_000_000L;
  /** The half-life of an observation's weight in the graph, so the plan follows a changing workload. */
  static final double HALF_LIFE_SECONDS = 20;
  /** Observations queued for the planner thread beyond this are dropped (the graph is a sample). */
  static final int MAX_QUEUED = 100_000;

  private final PlacementPlanner planner = new PlacementPlanner();
  /** Touched by the planner thread only. */
  private final WorkloadGraph graph = new WorkloadGraph();
  private final ConcurrentLinkedQueue<Observation> observed = new ConcurrentLinkedQueue<>();
  private final AtomicInteger queued = new AtomicInteger();
  /** One planner thread, which ends when idle (an oracle replica has no close hook). */
  private final java.util.concurrent.ThreadPoolExecutor worker = new java.util.concurrent.ThreadPoolExecutor(1, 1,
      5, java.util.concurrent.TimeUnit.SECONDS, new java.util.concurrent.LinkedBlockingQueue<>(), r -> {
        Thread t = new Thread(r, "eyrie-oracle-planner");
        t.setDaemon(true);
        return t;
      });

  GraphPlacement() {
    worker.allowCoreThreadTimeOut(true);
  }
  private volatile PlacementPlanner.Plan plan;
  private volatile int plans;
  private volatile boolean planning;
  private long lastPlanNanos;
  private volatile long planInterval = PLAN_INTERVAL_NANOS;
  private List<GroupId> lastPartitions = List.of();
  private long lastDecayNanos = System.nanoTime();

  /** Records the objects of a consulted command (a multi-object access). */
  void observe(List<ObjId> objects) {
    observe(objects, 1.0);
  }

  /** Records the objects of commands that accessed them together, {@code weight} commands' worth. */
  void observe(List<ObjId> objects, double weight) {
    if (objects.size() < 2 || queued.get() >= MAX_QUEUED) {
      return;
    }
    queued.incrementAndGet();
    observed.add(new Observation(objects, weight));
  }

  private record Observation(List<ObjId> objects, double weight) {}

  /**
   * Starts a new plan in the background if one is due; {@code locations} is called at once (the
   * caller holds the oracle's lock) to copy the current map.
   */
  synchronized void maybePlan(java.util.function.Supplier<Map<ObjId, GroupId>> locations, List<GroupId> partitions) {
    long now = System.nanoTime();
    boolean partitionsChanged = !partitions.equals(lastPartitions);
    if (planning || !partitionsChanged && now - lastPlanNanos < planInterval) {
      return;
    }
    lastPartitions = List.copyOf(partitions);
    planning = true;
    lastPlanNanos = now;
    Map<ObjId, GroupId> current = new TreeMap<>(locations.get());
    List<GroupId> parts = new ArrayList<>(partitions);
    try {
      worker.execute(() -> {
        try {
          long t0 = System.nanoTime();
          drain();
          plan = planner.plan(graph, current, parts);
          plans++;
          planInterval = plan.moves() == 0 ? Math.min(2 * planInterval, MAX_PLAN_INTERVAL_NANOS) : PLAN_INTERVAL_NANOS;
          if (LOG.isDebugEnabled()) {
            PlacementPlanner.Plan p = plan;
            LOG.debug("plan {} in {} ms ({} objects): cut {} -> {} (reference {}, noise {}), imbalance {} -> {}, {} moves,"
                + " worth moving {}", plans, (System.nanoTime() - t0) / 1_000_000, current.size(), p.cutBefore(),
                p.cutAfter(), p.referenceCut(), p.noiseReduction(), p.imbalanceBefore(), p.imbalanceAfter(), p.moves(),
                p.worthMoving());
          }
        } catch (RuntimeException e) {
          LOG.warn("placement plan failed: {}", e.toString());
        } finally {
          planning = false;
        }
      });
    } catch (RejectedExecutionException e) {
      planning = false;
    }
  }

  /**
   * Decays the graph by the time since the last call and records what was observed meanwhile,
   * rescaled so that every second of workload weighs {@link #WEIGHT_PER_SECOND} in all (or less
   * when fewer than a tenth of that was observed): the graph is a picture of <em>what</em> the
   * workload does, not of how fast. Without this, a workload that changes its communities stays
   * pinned to the old ones: the old placement makes the new commands slow (S-SMR across
   * partitions), so they would add weight many times slower than the old fast ones had, and
   * the plan would switch only after many half-lives (measured: not within 90 s of the change).
   */
  private void drain() {
    long now = System.nanoTime();
    double seconds = (now - lastDecayNanos) / 1e9;
    lastDecayNanos = now;
    graph.decay(Math.pow(0.5, seconds / HALF_LIFE_SECONDS));
    List<Observation> batch = new ArrayList<>();
    double total = 0;
    Observation o;
    while ((o = observed.poll()) != null) {
      queued.decrementAndGet();
      batch.add(o);
      total += o.weight();
    }
    double budget = WEIGHT_PER_SECOND * Math.min(Math.max(seconds, 0.1), 60);
    double factor = budget / Math.max(total, budget / 10);
    for (Observation b : batch) {
      graph.record(b.objects(), b.weight() * factor);
    }
  }

  /** What one second of observed workload weighs in the graph (see {@link #drain}). */
  static final double WEIGHT_PER_SECOND = 1000;

  /**
   * The partition to gather a command's objects in: the partition the plan assigns to most of
   * them (ties to the lowest); the paper's rule while there is no plan yet; {@code null} (do not
   * move, run with S-SMR) when the workload has no locality worth moving for.
   */
  GroupId target(Map<ObjId, GroupId> where) {
    PlacementPlanner.Plan p = plan;
    if (p == null) {
      return Locations.mostCommon(where);
    }
    if (!p.worthMoving()) {
      return null;
    }
    TreeMap<GroupId, Integer> votes = new TreeMap<>();
    where.forEach((id, at) -> votes.merge(p.placement().getOrDefault(id, at), 1, Integer::sum));
    GroupId best = null;
    for (Map.Entry<GroupId, Integer> e : votes.entrySet()) {
      if (best == null || e.getValue() > votes.get(best)) {
        best = e.getKey();
      }
    }
    return best;
  }

  /** How many plans were computed (for tests and diagnosis). */
  int plansComputed() {
    return plans;
  }

  /** The current plan, or null before the first (for tests and diagnosis). */
  PlacementPlanner.Plan plan() {
    return plan;
  }

  @Override
  public void close() {
    worker.shutdownNow();
  }
}
