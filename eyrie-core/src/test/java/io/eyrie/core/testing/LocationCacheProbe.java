package io.eyrie.core.testing;

import io.eyrie.core.ObjId;
import io.eyrie.core.internal.LocationCache;
import io.eyrie.core.protocol.Prophecy;
import io.eyrie.multicast.GroupId;
import java.util.Collection;
import java.util.List;

/**
 * The client proxy's own location cache ({@code LocationCache}: Caffeine, bounded), for
 * benchmarks and tests in other modules, which may not name eyrie-core's internal package: the
 * same object, not a copy, so a benchmark of it measures what a {@code Client} runs.
 */
public final class LocationCacheProbe {
  private final LocationCache cache;

  /**
   * Creates a cache of at most {@code maxSize} objects, as {@code Client.Builder.maxCachedLocations} does.
   *
   * @param maxSize the bound, at least 1
   */
  public LocationCacheProbe(long maxSize) {
    this.cache = new LocationCache(maxSize);
  }

  /** Caches that an object is in a partition. */
  public void put(ObjId id, GroupId g) {
    cache.put(List.of(id), g);
  }

  /** The cached partition of one object, or null. */
  public GroupId get(ObjId id) {
    return cache.get(id);
  }

  /**
   * The proxy's hit path before it sends a command: the lookup of every object, the partition
   * that holds most of them, and the hit counted.
   *
   * @param ids the command's objects
   * @return the target partition, or null on a miss
   */
  public GroupId target(Collection<ObjId> ids) {
    Prophecy p = cache.lookup(ids, false);
    return p == null ? null : p.target();
  }

  /** About how many objects are cached. */
  public long size() {
    return cache.size();
  }
}
