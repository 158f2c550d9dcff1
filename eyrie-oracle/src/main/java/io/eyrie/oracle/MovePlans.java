package io.eyrie.oracle;

import io.eyrie.core.ObjId;
import io.eyrie.core.protocol.Observed;
import io.eyrie.core.protocol.PlanMoves;
import io.eyrie.multicast.GroupId;
import io.eyrie.oracle.placement.PlacementPlanner;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The rebalancer's queries to the oracle: the accesses the partitions sampled, which feed the
 * learned placement, and the plans of moves, which drain retired partitions and carry out the
 * learned placement. Read-only queries: the moves themselves come back through the log.
 *
 * @param graph the learned placement (GRAPH mode), or null (the paper's rule)
 */
record MovePlans(LocationMap map, PartitionTableState table, VerdictChains chains, GraphPlacement graph) {
  /** Takes accesses a partition sampled (no consult saw them); returns how many there were. */
  int observed(Observed o) {
    if (graph != null && o.accesses() != null) {
      for (long[] objects : o.accesses()) {
        List<ObjId> ids = new ArrayList<>(objects.length);
        for (long id : objects) {
          ids.add(ObjId.valueOf(id));
        }
        graph.observe(ids, Math.max(1.0, o.weight()));
      }
      // No plan from here: the rebalancer hands every partition's samples in one round and
      // then asks for a plan (PlanReq). A plan started after the first partition's samples
      // would weigh the whole interval's workload on that partition's objects alone, see an
      // access imbalance that is not there, and reshuffle communities to fix it.
    }
    return o.accesses() == null ? 0 : o.accesses().size();
  }

  /**
   * Objects to move, at most {@code max}: first, in every placement mode, objects in retired
   * partitions (draining), each to the plan's partition if it is active, else to the active
   * partition with the fewest objects counting the moves already chosen; then (GRAPH mode, once
   * a plan exists) objects the learned plan wants in another active partition. Objects with a
   * command waiting in their chain stay where they are this round.
   */
  PlanMoves plan(int max) {
    TreeMap<ObjId, GroupId> from = new TreeMap<>();
    TreeMap<ObjId, GroupId> to = new TreeMap<>();
    if (graph != null) {
      graph.maybePlan(map::view, table.active());
    }
    PlacementPlanner.Plan plan = graph == null ? null : graph.plan();
    if (table.hasRetired()) {
      TreeMap<GroupId, Long> counts = new TreeMap<>(map.load());
      for (Map.Entry<ObjId, GroupId> e : map.view().entrySet()) {
        if (from.size() >= Math.max(0, max)) {
          break;
        }
        if (!table.isActive(e.getValue()) && !chains.waiting(e.getKey())) {
          GroupId want = plan == null ? null : plan.placement().get(e.getKey());
          GroupId dst = table.placement(want, counts);
          counts.merge(dst, 1L, Long::sum);
          from.put(e.getKey(), e.getValue());
          to.put(e.getKey(), dst);
        }
      }
    }
    if (plan != null) {
      for (Map.Entry<ObjId, GroupId> e : plan.placement().entrySet()) {
        if (from.size() >= Math.max(0, max)) {
          break;
        }
        GroupId at = map.get(e.getKey());
        if (at != null && !at.equals(e.getValue()) && table.isActive(e.getValue()) && !from.containsKey(e.getKey())
            && !chains.waiting(e.getKey())) {
          from.put(e.getKey(), at);
          to.put(e.getKey(), e.getValue());
        }
      }
    }
    return new PlanMoves(from, to);
  }
}
