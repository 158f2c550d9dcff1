package io.eyrie.core.internal;

import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import java.util.Collection;
import java.util.Collections;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * Owns what a partition knows of the oracle's partition table. Each partition change goes to
 * every partition of the table, which learns the resulting table from the oracle. This holds the
 * partitions retired as of the last change delivered here (no move ships objects into one of
 * them, so a drained partition stays empty), and the changes delivered here whose table has not
 * come yet (a move out of this partition waits for them, so that it ships by the table in force
 * at its point of the order). Replicated (in the snapshot).
 */
public final class TableChanges {
  private final TreeSet<GroupId> retired = new TreeSet<>();
  private final TreeSet<MsgId> pending = new TreeSet<>();

  /** Records a change delivered here, whose table the oracle has yet to send. */
  public void delivered(MsgId change) {
    pending.add(change);
  }

  /**
   * Ends a change: it no longer holds moves back. The oracle's table, unless the oracle abandoned
   * the change, then says which partitions are retired ({@link #setRetired}).
   */
  public void ended(MsgId change) {
    pending.remove(change);
  }

  /** Whether a change delivered here still waits for its table. */
  public boolean waiting() {
    return !pending.isEmpty();
  }

  /** Whether a partition is retired. */
  public boolean isRetired(GroupId g) {
    return retired.contains(g);
  }

  /** Sets the retired partitions. */
  public void setRetired(Collection<GroupId> partitions) {
    retired.clear();
    retired.addAll(partitions);
  }

  /** Returns the retired partitions, in order. */
  public SortedSet<GroupId> retired() {
    return Collections.unmodifiableSortedSet(retired);
  }

  /** Returns the changes that wait for their table, in order. */
  public SortedSet<MsgId> pending() {
    return Collections.unmodifiableSortedSet(pending);
  }

  /** Forgets everything. */
  public void clear() {
    retired.clear();
    pending.clear();
  }
}
