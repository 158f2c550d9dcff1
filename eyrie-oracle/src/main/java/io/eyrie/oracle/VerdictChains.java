package io.eyrie.oracle;

import io.eyrie.core.ObjId;
import io.eyrie.multicast.MsgId;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Collections;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The per-object chains of the commands that wait for their partitions' Begun: for each object
 * with a create, delete or move waiting, the commands on it in delivery order (message ids),
 * first the oldest waiting one. A command is decided only at the head of its objects' chains,
 * so the changes to one object are applied in the oracle's delivery order. Replicated and in the
 * snapshot.
 */
final class VerdictChains {
  private final TreeMap<ObjId, ArrayDeque<MsgId>> chains = new TreeMap<>();

  /** Queues a command at the end of an object's chain. */
  void add(ObjId id, MsgId msg) {
    chains.computeIfAbsent(id, k -> new ArrayDeque<>()).add(msg);
  }

  /** True if the command is the oldest one waiting on the object. */
  boolean isHead(ObjId id, MsgId msg) {
    ArrayDeque<MsgId> chain = chains.get(id);
    return chain != null && msg.equals(chain.peek());
  }

  /** True if a command on the object is waiting. */
  boolean waiting(ObjId id) {
    return chains.containsKey(id);
  }

  /**
   * Takes a command out of an object's chain: its head, or anywhere for one a destination
   * abandoned.
   */
  void pop(ObjId id, MsgId msg) {
    ArrayDeque<MsgId> chain = chains.get(id);
    if (chain == null) {
      return;
    }
    chain.remove(msg);
    if (chain.isEmpty()) {
      chains.remove(id);
    }
  }

  /** The chains, read-only, in object order. */
  SortedMap<ObjId, ? extends Collection<MsgId>> view() {
    return Collections.unmodifiableSortedMap(chains);
  }

  /** Sets an object's chain (from a snapshot). */
  void restore(ObjId id, Collection<MsgId> msgs) {
    chains.put(id, new ArrayDeque<>(msgs));
  }

  void clear() {
    chains.clear();
  }
}
