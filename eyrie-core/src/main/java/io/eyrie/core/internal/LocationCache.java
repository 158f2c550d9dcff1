package io.eyrie.core.internal;

import io.eyrie.core.ObjId;
import io.eyrie.core.protocol.Locations;
import io.eyrie.core.protocol.Prophecy;
import io.eyrie.multicast.GroupId;
import java.util.Collection;
import java.util.HashSet;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Owns a client proxy's location cache: the partition where the proxy last learned each object
 * is, and how many commands found all their objects there. A stale entry costs only a retry.
 * Thread-safe.
 */
public final class LocationCache {
  private final ConcurrentHashMap<ObjId, GroupId> where = new ConcurrentHashMap<>();
  private final AtomicLong hits = new AtomicLong();

  /**
   * Returns what the cache says of a command's objects, as a prophecy with status RETRY: their
   * cached partitions, and the partition that holds most of them as the target. Counts a hit.
   *
   * @param ids the command's objects
   * @param onePartition whether objects cached in several partitions count as a miss
   * @return the prophecy, or null on a miss (an object not cached, or spread when it must not be)
   */
  public Prophecy lookup(Collection<ObjId> ids, boolean onePartition) {
    TreeMap<ObjId, GroupId> found = new TreeMap<>();
    for (ObjId id : ids) {
      GroupId g = where.get(id);
      if (g == null) {
        return null;
      }
      found.put(id, g);
    }
    if (onePartition && new HashSet<>(found.values()).size() > 1) {
      return null;
    }
    hits.incrementAndGet();
    return new Prophecy(Prophecy.Status.RETRY, found, Locations.mostCommon(found));
  }

  /** Returns how many lookups were hits. */
  public long hits() {
    return hits.get();
  }

  /** Returns the cached partition of an object, or null. */
  public GroupId get(ObjId id) {
    return where.get(id);
  }

  /** Caches that objects are in a partition. */
  public void put(Collection<ObjId> ids, GroupId g) {
    ids.forEach(id -> where.put(id, g));
  }

  /** Caches the given locations. */
  public void putAll(Map<ObjId, GroupId> locations) {
    where.putAll(locations);
  }

  /** Forgets the given objects' locations. */
  public void remove(Collection<ObjId> ids) {
    ids.forEach(where::remove);
  }

  /** Forgets every location. */
  public void clear() {
    where.clear();
  }
}
