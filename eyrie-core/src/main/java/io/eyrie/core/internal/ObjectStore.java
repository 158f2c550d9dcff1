package io.eyrie.core.internal;

import io.eyrie.core.ObjId;
import io.eyrie.core.PRObject;
import io.eyrie.core.protocol.PartitionStatsReply;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Owns a partition's objects, by id, and the counts of what it executed: commands run, those
 * of them that spanned partitions (S-SMR), and RETRY answers. Every object stored here can be
 * encoded and decoded and fits in one channel item: creates, moves and commands check it before
 * an object gets here or stays. Replicated (in the snapshot): the counts change only through
 * the log.
 */
public final class ObjectStore {
  /** By id, hashed: every command looks its objects up several times. Ordered where it is listed. */
  private final HashMap<ObjId, PRObject> objects = new HashMap<>();
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

  /** Returns how many objects are here. */
  public int size() {
    return objects.size();
  }

  /** Returns the ids of the objects here, in order (a copy). */
  public SortedSet<ObjId> ids() {
    return Collections.unmodifiableSortedSet(new TreeSet<>(objects.keySet()));
  }

  /** Returns the objects here, in the order of their ids (a copy). */
  public List<PRObject> values() {
    return new TreeMap<>(objects).values().stream().toList();
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
      ids = objects.keySet().stream().mapToLong(ObjId::value).sorted().toArray();
    }
    return new PartitionStatsReply(objects.size(), executed, multiPartition, retries, ids);
  }

  /** Forgets every object and zeroes the counts. */
  public void clear() {
    objects.clear();
    restoreCounts(0, 0, 0);
  }
}
