package io.eyrie.oracle;

import io.eyrie.core.PartitionTable;
import io.eyrie.core.protocol.PartitionChange;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.GroupId;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The oracle's partition table: every partition the oracle may place objects in, true while
 * active (takes new and gathered objects), false once retired (drained by the rebalancer's plan).
 * Starts with the cluster file's partitions; changed by {@link PartitionChange}, which this
 * class applies and sends on to the partitions. Replicated and in the snapshot. Every partition
 * it names gets a load entry in the {@link LocationMap}.
 */
final class PartitionTableState {
  private final ClusterConfig cluster;
  private final LocationMap map;
  private final TreeMap<GroupId, Boolean> table = new TreeMap<>();
  /** The active partitions, ascending (recomputed from {@link #table} when it changes). */
  private volatile List<GroupId> active = List.of();

  PartitionTableState(ClusterConfig cluster, LocationMap map) {
    this.cluster = cluster;
    this.map = map;
    reset();
  }

  /**
   * Back to the cluster file's partitions, all active: the {@code cluster} a node gives a
   * replica is the cluster file's at every replica, even on a node that learned added partitions
   * (review N1), so every replica that replays the log from its start starts from the same table.
   */
  void reset() {
    table.clear();
    for (GroupId p : cluster.partitions()) {
      table.put(p, true);
      map.track(p);
    }
    changed();
  }

  /** Replaces the table with the given one (from a snapshot). */
  void restore(Map<GroupId, Boolean> entries) {
    table.clear();
    entries.forEach((g, on) -> {
      table.put(g, on);
      map.track(g);
    });
    changed();
  }

  /** The table itself, read-only, in partition order (true: active). */
  SortedMap<GroupId, Boolean> view() {
    return Collections.unmodifiableSortedMap(table);
  }

  private void changed() {
    List<GroupId> a = new ArrayList<>();
    table.forEach((g, on) -> {
      if (on) {
        a.add(g);
      }
    });
    active = List.copyOf(a);
  }

  /** The active partitions, ascending: where new objects and gathered ones go. */
  List<GroupId> active() {
    return active;
  }

  boolean isActive(GroupId g) {
    return g != null && Boolean.TRUE.equals(table.get(g));
  }

  /** True if some partition of the table is retired. */
  boolean hasRetired() {
    return active.size() < table.size();
  }

  /** The partition table with the objects the map places in each partition. */
  PartitionTable table() {
    TreeMap<GroupId, PartitionTable.State> states = new TreeMap<>();
    TreeMap<GroupId, Long> objects = new TreeMap<>();
    table.forEach((g, on) -> {
      states.put(g, on ? PartitionTable.State.ACTIVE : PartitionTable.State.RETIRED);
      objects.put(g, map.objectsAt(g));
    });
    return new PartitionTable(states, objects);
  }

  /** The active partition with the fewest objects in {@code counts} (ties to the lowest). */
  GroupId leastLoaded(Map<GroupId, Long> counts) {
    GroupId best = null;
    for (GroupId p : active) {
      if (best == null || counts.getOrDefault(p, 0L) < counts.getOrDefault(best, 0L)) {
        best = p;
      }
    }
    return best;
  }

  /**
   * Where a new object goes: the application's choice {@code wanted} if it is an active
   * partition, else (a retired or unknown partition, or none) the active partition with the
   * fewest objects in {@code counts}.
   */
  GroupId placement(GroupId wanted, Map<GroupId, Long> counts) {
    return isActive(wanted) ? wanted : leastLoaded(counts);
  }

  /**
   * Applies a change of the partition table (ordered, so the same at every replica). Retiring
   * the last active partition is refused: new objects would have nowhere to go. The change goes
   * to every partition of the table too, and each gets the table it leaves (refused or not), so
   * that every partition knows, at the same point of the order as the oracle, which partitions
   * are retired: no move ships into one after its retire (a drained partition stays empty). A
   * change that misses a partition of the table is refused: the client learns the cluster again
   * and sends it to all. {@code partitions} are the change's partition destinations.
   */
  Execution change(ExecutionContext ctx, PartitionChange c, List<GroupId> partitions) {
    GroupId g = c.partition();
    String refused = null;
    TreeSet<GroupId> missing = new TreeSet<>(table.keySet());
    missing.removeAll(ctx.dests());
    if (!missing.isEmpty()) {
      refused = "a partition change goes to every partition of the oracle's table; it missed " + missing
          + " (learn the cluster again and send it to all)";
    } else if (c.active()) {
      table.put(g, true);
      map.track(g);
    } else if (!table.containsKey(g)) {
      refused = "partition " + g + " is not in the oracle's table";
    } else if (isActive(g) && active.size() == 1) {
      refused = "cannot retire " + g + ": it is the last active partition";
    } else {
      table.put(g, false);
    }
    changed();
    PartitionTable t = send(ctx, partitions);
    return refused == null ? Execution.reply(t) : Execution.error(refused);
  }

  /**
   * Sends the partition table to those of {@code partitions} (a partition change's destinations)
   * that are partitions of the cluster the change was ordered in; returns it.
   */
  PartitionTable send(ExecutionContext ctx, List<GroupId> partitions) {
    PartitionTable t = table();
    for (GroupId g : partitions) {
      if (ctx.partitions().contains(g)) {
        ctx.send(g, t);
      }
    }
    return t;
  }
}
