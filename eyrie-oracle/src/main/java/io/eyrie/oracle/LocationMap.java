package io.eyrie.oracle;

import io.eyrie.core.ObjId;
import io.eyrie.multicast.GroupId;
import java.util.Collections;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * The oracle's location map: the partition of every object, and the number of objects in each
 * partition (the load) kept with it. Every partition of the table has a load entry, zero while it
 * holds nothing. Replicated: changed only by commands from the log, and in the snapshot.
 */
final class LocationMap {
  private final TreeMap<ObjId, GroupId> locations = new TreeMap<>();
  private final TreeMap<GroupId, Long> load = new TreeMap<>();
  /** Told the partition of every object that enters the map (a create, not a move). */
  private final Consumer<GroupId> entered;

  LocationMap(Consumer<GroupId> entered) {
    this.entered = entered;
  }

  GroupId get(ObjId id) {
    return locations.get(id);
  }

  boolean contains(ObjId id) {
    return locations.containsKey(id);
  }

  /** The map itself, read-only and live, in object order. */
  SortedMap<ObjId, GroupId> view() {
    return Collections.unmodifiableSortedMap(locations);
  }

  /** A copy of the map. */
  TreeMap<ObjId, GroupId> copy() {
    return new TreeMap<>(locations);
  }

  /** The objects per partition, live (the replicated counts, without the consults' prophecies). */
  TreeMap<GroupId, Long> load() {
    return load;
  }

  long objectsAt(GroupId partition) {
    return load.getOrDefault(partition, 0L);
  }

  /** Gives a partition of the table its load entry (zero) if it has none. */
  void track(GroupId partition) {
    load.putIfAbsent(partition, 0L);
  }

  /** Places an object in a partition, or (null) takes it out of the map. */
  void place(ObjId id, GroupId at) {
    GroupId old = set(id, at);
    if (at != null && old == null) {
      entered.accept(at);
    }
  }

  /**
   * Puts an object back where it was before a verdict that failed (null: not in the map), and
   * its load with it. Nobody is told: for the map, nothing happened.
   */
  void putBack(ObjId id, GroupId before) {
    set(id, before);
  }

  /** Follows a move of an object the map places at its source; from anywhere else it is ignored. */
  void move(ObjId id, GroupId src, GroupId dst) {
    if (src.equals(locations.get(id))) {
      place(id, dst);
    }
  }

  void clear() {
    locations.clear();
    load.clear();
  }

  private GroupId set(ObjId id, GroupId at) {
    GroupId old = at == null ? locations.remove(id) : locations.put(id, at);
    if (old != null) {
      load.merge(old, -1L, Long::sum);
    }
    if (at != null) {
      load.merge(at, 1L, Long::sum);
    }
    return old;
  }
}
