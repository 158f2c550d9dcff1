package io.eyrie.core.internal;

import io.eyrie.core.ObjId;
import io.eyrie.core.PRObject;
import io.eyrie.core.protocol.PartitionStatsReply;
import java.util.Collection;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Owns a partition's objects, by id, and the counts of what it executed: commands run, those
 * of them that spanned partitions (S-SMR), and RETRY answers. Every object stored here can be
 * encoded and decoded and fits in one channel item: creates, moves and commands check it before
 * an object gets here or stays. Replicated (in the snapshot): the counts change only through
 * the log.
 */
public final class ObjectStore {
  private final TreeMap<ObjId, PRObject> objects = new TreeMap<>();
  private long executed;
  private long multiPartition;
  private long retries;

  /** Returns the object, or null if it is not here. */
  public PRObject get(ObjId id) {
    return objects.get(id);
  }

  /** Whether the object is here. */
  public boolean contains(ObjId id) {
    return objects.containsKey(id);
  }

  /** Stores an object, or replaces the one of its id. */
  public void put(ObjId id, PRObject o) {
    objects.put(id, o);
  }

  /** Stores objects that arrived. */
  public void putAll(Map<ObjId, PRObject> arrived) {
    objects.putAll(arrived);
  }

  /** Removes an object; returns it, or null if it was not here. */
  public PRObject remove(ObjId id) {
    return objects.remove(id);
  }

  /** Returns the ids of the objects here, in order. */
  public Set<ObjId> ids() {
    return Collections.unmodifiableSet(objects.keySet());
  }

  /** Returns the objects here, in the order of their ids. */
  public Collection<PRObject> values() {
    return Collections.unmodifiableCollection(objects.values());
  }

  /** Counts a command executed. */
  public void countExecuted() {
    executed++;
  }

  /** Counts a command executed on the values of several partitions. */
  public void countMultiPartition() {
    multiPartition++;
  }

  /** Counts a RETRY answer. */
  public void countRetry() {
    retries++;
  }

  /** Returns the counts, in the order the snapshot keeps them: executed, multi-partition, retries. */
  public long[] counts() {
    return new long[] {executed, multiPartition, retries};
  }

  /** Sets the counts read from a snapshot, in the order of {@link #counts()}. */
  public void restoreCounts(long executed, long multiPartition, long retries) {
    this.executed = executed;
    this.multiPartition = multiPartition;
    this.retries = retries;
  }

  /** Returns the partition's statistics, with the ids of its objects if asked. */
  public PartitionStatsReply stats(boolean withObjects) {
    long[] ids = null;
    if (withObjects) {
      ids = objects.keySet().stream().mapToLong(ObjId::value).toArray();
    }
    return new PartitionStatsReply(objects.size(), executed, multiPartition, retries, ids);
  }

  /** Forgets every object and zeroes the counts. */
  public void clear() {
    objects.clear();
    restoreCounts(0, 0, 0);
  }
}
