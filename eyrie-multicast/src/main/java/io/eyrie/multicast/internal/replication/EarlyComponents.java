package io.eyrie.multicast.internal.replication;

import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.Wire.Component;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.TreeMap;

/**
 * The components a leader received for messages its replica has not applied yet (design 4.3.1,
 * rule 3): kept a few seconds, at most {@code max} of them, and handed over when the message is
 * applied. Not thread-safe: its {@link Exchange} guards it.
 */
final class EarlyComponents {
  private record Early(Component c, long at) {}

  private final long keepNanos;
  private final int max;
  private final TreeMap<MsgId, List<Early>> early = new TreeMap<>();
  private int count;

  EarlyComponents(long keepNanos, int max) {
    this.keepNanos = keepNanos;
    this.max = max;
  }

  /** Keeps a component received at {@code now}, unless the buffer is full. */
  void add(Component c, long now) {
    if (count < max) {
      early.computeIfAbsent(c.id(), k -> new ArrayList<>()).add(new Early(c, now));
      count++;
    }
  }

  /** Removes and returns the components kept for a message (empty if none). */
  List<Component> take(MsgId id) {
    List<Early> es = early.remove(id);
    if (es == null) {
      return List.of();
    }
    count -= es.size();
    List<Component> out = new ArrayList<>(es.size());
    es.forEach(e -> out.add(e.c()));
    return out;
  }

  /** Drops what was kept longer than the keeping time. */
  void expire(long now) {
    if (count == 0) {
      return;
    }
    for (Iterator<List<Early>> it = early.values().iterator(); it.hasNext(); ) {
      List<Early> es = it.next();
      int before = es.size();
      es.removeIf(e -> now - e.at() > keepNanos);
      count -= before - es.size();
      if (es.isEmpty()) {
        it.remove();
      }
    }
  }

  void clear() {
    early.clear();
    count = 0;
  }

  int size() {
    return count;
  }
}
