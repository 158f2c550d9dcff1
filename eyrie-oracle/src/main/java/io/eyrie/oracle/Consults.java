package io.eyrie.oracle;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.protocol.Locations;
import io.eyrie.core.protocol.Prophecy;
import io.eyrie.multicast.GroupId;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;

/**
 * The oracle's answers to consults: a prophecy says where a command's objects are and where to
 * run it, or where a new object goes. Consults are read-only queries, answered by one replica
 * and only hints (the partitions check again), so this class changes nothing replicated. It owns
 * the creates this replica prophesied that the map does not hold yet, which count toward their
 * partition's load for a while.
 */
final class Consults {
  /** How long a prophesied create counts toward its partition's load if it is not applied. */
  static final long PROPHECY_HOLD_NANOS = 5_000_000_000L;

  /** A create this replica prophesied to a partition, and when (System.nanoTime). */
  private record Prophesied(GroupId at, long nanos) {}

  private final OracleStateMachine app;
  private final LocationMap map;
  private final PartitionTableState table;
  /** The learned placement (GRAPH mode), or null (the paper's rule). */
  private final GraphPlacement graph;
  private final ArrayDeque<Prophesied> prophesied = new ArrayDeque<>();
  private boolean consulting;

  Consults(OracleStateMachine app, LocationMap map, PartitionTableState table, GraphPlacement graph) {
    this.app = app;
    this.map = map;
    this.table = table;
    this.graph = graph;
  }

  Prophecy consult(Command cmd) {
    switch (cmd.kind()) {
      case ACCESS -> {
        TreeMap<ObjId, GroupId> where = new TreeMap<>();
        for (ObjId id : app.extractObjects(cmd)) {
          GroupId g = map.get(id);
          if (g == null) {
            return Prophecy.nok(id);
          }
          where.put(id, g);
        }
        if (graph != null && where.size() > 1) {
          graph.observe(new ArrayList<>(where.keySet()));
          graph.maybePlan(map::view, table.active());
        }
        GroupId target = app.getTargetPartition(where);
        if (target != null && !table.isActive(target)) {
          target = activeTarget(where);
        }
        return new Prophecy(Prophecy.Status.RETRY, where, target);
      }
      case CREATE -> {
        if (map.contains(cmd.target())) {
          return Prophecy.nok(cmd.target());
        }
        return new Prophecy(Prophecy.Status.RETRY, new TreeMap<>(), placeNew(cmd));
      }
      case DELETE -> {
        GroupId g = map.get(cmd.target());
        if (g == null) {
          return Prophecy.nok(cmd.target());
        }
        TreeMap<ObjId, GroupId> where = new TreeMap<>();
        where.put(cmd.target(), g);
        return new Prophecy(Prophecy.Status.RETRY, where, g);
      }
      default -> throw new IllegalArgumentException("unknown command kind " + cmd.kind());
    }
  }

  /**
   * The objects per partition. While a consult chooses where a new object goes, it also counts
   * the creates this replica prophesied in the last {@link #PROPHECY_HOLD_NANOS} that have not
   * been applied yet: concurrent creates all consult before any is applied, and by the map alone
   * they would all go to the same emptiest partition. Only consults (leader-local, hints) see
   * that; the log's apply path sees the replicated counts, so it stays deterministic.
   */
  TreeMap<GroupId, Long> load() {
    if (!consulting || prophesied.isEmpty()) {
      return map.load();
    }
    TreeMap<GroupId, Long> l = new TreeMap<>(map.load());
    for (Prophesied p : prophesied) {
      l.merge(p.at(), 1L, Long::sum);
    }
    return l;
  }

  /** An object entered the map at a partition: the create a consult prophesied there (if any) no longer counts. */
  void entered(GroupId at) {
    for (Iterator<Prophesied> it = prophesied.iterator(); it.hasNext(); ) {
      if (it.next().at().equals(at)) {
        it.remove();
        break;
      }
    }
  }

  private GroupId placeNew(Command cmd) {
    long now = System.nanoTime();
    while (!prophesied.isEmpty() && (now - prophesied.peek().nanos() > PROPHECY_HOLD_NANOS || prophesied.size() > 10_000)) {
      prophesied.poll();
    }
    GroupId at;
    consulting = true;
    try {
      TreeMap<GroupId, Long> counts = load();
      at = table.placement(app.getObjectPlacement(cmd), counts);
    } finally {
      consulting = false;
    }
    if (at != null) {
      prophesied.add(new Prophesied(at, now));
    }
    return at;
  }

  /**
   * Where to gather objects when the application's target is not an active partition: the
   * active partition already holding most of them, else the one with the fewest objects.
   */
  private GroupId activeTarget(Map<ObjId, GroupId> where) {
    TreeMap<ObjId, GroupId> inActive = new TreeMap<>();
    where.forEach((id, g) -> {
      if (table.isActive(g)) {
        inActive.put(id, g);
      }
    });
    return inActive.isEmpty() ? table.leastLoaded(load()) : Locations.mostCommon(inActive);
  }
}
