package io.eyrie.multicast.internal.state;

import java.util.ArrayList;
import java.util.List;

/**
 * A FIFO of items numbered by consecutive sequence numbers, trimmed from the front: the
 * replicated outbox of one group channel.
 */
final class SeqQueue {
  private Object[] ring = new Object[16];
  private int head;
  private int size;
  private long first;

  SeqQueue(long first) {
    this.first = first;
  }

  /** Sequence number of the oldest item kept. */
  long first() {
    return first;
  }

  /** Sequence number the next appended item gets. */
  long next() {
    return first + size;
  }

  int size() {
    return size;
  }

  void append(Object item) {
    if (size == ring.length) {
      Object[] bigger = new Object[ring.length * 2];
      for (int i = 0; i < size; i++) {
        bigger[i] = ring[(head + i) % ring.length];
      }
      ring = bigger;
      head = 0;
    }
    ring[(head + size) % ring.length] = item;
    size++;
  }

  /** Drops every item with a sequence number below {@code seq}. */
  void trimBelow(long seq) {
    while (size > 0 && first < seq) {
      ring[head] = null;
      head = (head + 1) % ring.length;
      size--;
      first++;
    }
  }

  /**
   * Returns up to {@code max} items starting at sequence number {@code from}.
   *
   * @throws IllegalArgumentException if {@code from} was trimmed already (returning the later
   *     items instead would get them labelled with the wrong numbers)
   */
  List<Object> range(long from, int max) {
    if (from < first) {
      throw new IllegalArgumentException("sequence number " + from + " was trimmed (the first kept is " + first + ")");
    }
    List<Object> out = new ArrayList<>();
    for (long s = from; s < next() && out.size() < max; s++) {
      out.add(ring[(int) ((head + (s - first)) % ring.length)]);
    }
    return out;
  }
}
