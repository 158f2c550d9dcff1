package io.eyrie.core.internal;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.eyrie.core.ObjId;
import io.eyrie.core.protocol.Locations;
import io.eyrie.core.protocol.Prophecy;
import io.eyrie.multicast.GroupId;
import java.util.Collection;
import java.util.HashSet;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Owns a client proxy's location cache: the partition where the proxy last learned each object
 * is, and how many commands found all their objects there. A stale entry costs only a retry.
 * Bounded: past {@link #maxSize()} objects Caffeine evicts the ones least likely to be used
 * again, and a command on an evicted object is a miss, which consults the oracle as for an
 * object never seen. Eviction runs on the thread that writes (no background thread), so the
 * size is back within the bound when a write returns. Thread-safe.
 */
public final class LocationCache {
  /** The default bound: a million objects (some 100 MB at most). */
  public static final long DEFAULT_MAX_SIZE = 1_000_000;

  private final long maxSize;
  private final Cache<ObjId, GroupId> where;
  private final AtomicLong hits = new AtomicLong();

  /** Creates a cache of {@link #DEFAULT_MAX_SIZE} objects at most. */
  public LocationCache() {
    this(DEFAULT_MAX_SIZE);
  }

  /**
   * Creates a cache.
   *
   * @param maxSize the most objects it holds, at least 1
   */
  public LocationCache(long maxSize) {
    if (maxSize < 1) {
      throw new IllegalArgumentException("the location cache must hold at least one object, got " + maxSize);
    }
    this.maxSize = maxSize;
    this.where = Caffeine.newBuilder().maximumSize(maxSize).executor(Runnable::run).build();
  }

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
      GroupId g = where.getIfPresent(id);
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
    return where.getIfPresent(id);
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
    where.invalidateAll(ids);
  }

  /** Forgets every location. */
  public void clear() {
    where.invalidateAll();
  }

  /** Returns about how many objects are cached (Caffeine's estimate: exact once writes settle). */
  public long size() {
    return where.estimatedSize();
  }

  /** Returns the most objects it holds. */
  public long maxSize() {
    return maxSize;
  }
}
