package io.eyrie.core.internal;

import io.eyrie.core.ObjId;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * Owns a partition's per-object ordering: the objects held by the commands that started here and
 * wait for another group off the queue ({@link Execution#resumeLater}), and the commands that
 * could not start because an object of theirs is held or claimed by a command blocked before
 * them ({@link Execution#blocked}). With both, every object's commands run in delivery order
 * while commands on other objects go on (docs/design.md 6). Replicated: the partition's snapshot
 * holds both.
 */
public final class ObjectLocks {
  /**
   * The objects of the commands in progress here: an S-SMR access waiting for the other
   * partitions' values, a create or delete for the oracle's verdict, a move's destination for the
   * source's values. Declared objects, present or not.
   */
  private final HashSet<ObjId> held = new HashSet<>();
  /** The commands blocked here, in delivery order, with their objects. */
  private final LinkedHashMap<MsgId, ObjId[]> waiting = new LinkedHashMap<>();

  /**
   * True if a message must wait: an object of it is held by a command in progress here, or
   * claimed by a command that waits to start and was delivered before it ({@code id}; every
   * waiting command counts if null, as for a read off the log).
   *
   * @param id the message, or null
   * @param touched its objects
   * @return whether it must wait
   */
  public boolean mustWait(MsgId id, Collection<ObjId> touched) {
    if (held.isEmpty() && waiting.isEmpty()) {
      return false;
    }
    for (ObjId o : touched) {
      if (held.contains(o)) {
        return true;
      }
    }
    for (Map.Entry<MsgId, ObjId[]> e : waiting.entrySet()) {
      if (e.getKey().equals(id)) {
        return false; // only those before it count
      }
      for (ObjId a : e.getValue()) {
        if (touched.contains(a)) {
          return true;
        }
      }
    }
    return false;
  }

  /** Records that a message is blocked, claiming its objects; a message already waiting keeps its place. */
  public void block(MsgId id, ObjId[] touched) {
    waiting.putIfAbsent(id, touched);
  }

  /** Forgets a message that waited, once it starts or is refused. */
  public void unblock(MsgId id) {
    waiting.remove(id);
  }

  /**
   * Started here (what was just sent, if anything, says so): waits for the groups off the queue,
   * holding the objects, so that only commands on other objects overtake this one.
   *
   * @param ctx the command's context
   * @param self this partition
   * @param touched the command's objects
   * @param groups the groups it waits for
   * @return the execution to answer
   */
  public Execution waitHolding(ExecutionContext ctx, GroupId self, ObjId[] touched, List<GroupId> groups) {
    for (GroupId g : groups) {
      if (g.equals(self) || !ctx.dests().contains(g)) {
        // Validation refuses such messages; were one to pass, its wait would be refused and
        // resume never called, so nothing may stay held for it.
        return Execution.error("cannot wait for " + g + ", which is not another destination");
      }
    }
    hold(touched);
    return Execution.resumeLater(groups);
  }

  /** Holds objects (a command in progress, or one read from a snapshot). */
  public void hold(ObjId... ids) {
    Collections.addAll(held, ids);
  }

  /** Releases the objects of a command that resumed. */
  public void release(ObjId[] ids) {
    for (ObjId id : ids) {
      held.remove(id);
    }
  }

  /** Returns the held objects, in order (a copy). */
  public SortedSet<ObjId> held() {
    return Collections.unmodifiableSortedSet(new TreeSet<>(held));
  }

  /** Returns the blocked messages and their objects, in delivery order. */
  public Map<MsgId, ObjId[]> waiting() {
    return Collections.unmodifiableMap(waiting);
  }

  /** Forgets every hold and every blocked message. */
  public void clear() {
    held.clear();
    waiting.clear();
  }
}
