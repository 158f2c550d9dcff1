package io.eyrie.core;

import io.eyrie.multicast.GroupId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The oracle's partition table, as one reply: each partition's state and how many objects the
 * oracle places there. Active partitions take new objects and the objects of multi-partition
 * commands; a retired one takes nothing new and is emptied by the rebalancer's moves
 * ({@link Client#drain}); a retired partition without objects is drained.
 *
 * @param states each partition's state
 * @param objects how many objects the oracle's map places in each partition
 */
public record PartitionTable(TreeMap<GroupId, State> states, TreeMap<GroupId, Long> objects) {
  /** A partition's state in the oracle's table. */
  public enum State {
    /** Takes new objects and gathered ones. */
    ACTIVE,
    /** Takes nothing new; its objects are moved out by the rebalancer. */
    RETIRED
  }

  /** Copies the maps, so a table never changes. */
  public PartitionTable {
    states = new TreeMap<>(states);
    objects = new TreeMap<>(objects);
  }

  /** Returns the active partitions, ascending. */
  public List<GroupId> active() {
    return of(State.ACTIVE);
  }

  /** Returns the retired partitions, ascending (drained or not). */
  public List<GroupId> retired() {
    return of(State.RETIRED);
  }

  private List<GroupId> of(State s) {
    List<GroupId> out = new ArrayList<>();
    states.forEach((g, st) -> {
      if (st == s) {
        out.add(g);
      }
    });
    return out;
  }

  /** Returns how many objects the oracle places in a partition (0 if none or unknown). */
  public long objectsAt(GroupId partition) {
    return objects.getOrDefault(partition, 0L);
  }

  /** Returns true if the partition is retired and holds no object. */
  public boolean drained(GroupId partition) {
    return states.get(partition) == State.RETIRED && objectsAt(partition) == 0;
  }

  /** One line per partition: name, state (DRAINED for a retired one without objects) and objects. */
  @Override
  public String toString() {
    StringBuilder b = new StringBuilder();
    for (Map.Entry<GroupId, State> e : states.entrySet()) {
      String st = drained(e.getKey()) ? "DRAINED" : e.getValue().name();
      b.append(String.format(java.util.Locale.ROOT, "%-12s %-8s %d objects%n", e.getKey().name(), st,
          objectsAt(e.getKey())));
    }
    return b.toString();
  }
}
