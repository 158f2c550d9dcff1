/**
 * Workload-aware placement for the oracle, without any cluster: a {@link
 * io.eyrie.oracle.placement.WorkloadGraph} of the objects that commands use together (decayed,
 * bounded in memory) and a {@link io.eyrie.oracle.placement.PlacementPlanner} that turns it and
 * the current placement into a balanced plan that cuts as little of the graph as it can, moves as
 * few objects as it can, and says when moving is not worth it (no locality in the workload).
 *
 * <p>Everything here is deterministic (same calls, same graph; same inputs, same plan) so that
 * replicas of the oracle can compute it from their log.
 */
package io.eyrie.oracle.placement;
