package io.eyrie.multicast.internal.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class SeqQueueTest {
  private static SeqQueue numbered(long first, int count) {
    SeqQueue q = new SeqQueue(first);
    for (long s = first; s < first + count; s++) {
      q.append("item " + s);
    }
    return q;
  }

  @Test
  void rangeReturnsItemsByTheirSequenceNumbers() {
    SeqQueue q = numbered(5, 40);
    q.trimBelow(20);
    assertEquals(20, q.first());
    assertEquals(45, q.next());
    assertEquals(List.of("item 20", "item 21", "item 22"), q.range(20, 3));
    assertEquals(List.of("item 43", "item 44"), q.range(43, 10));
    assertEquals(List.of(), q.range(45, 10));
  }

  @Test
  void rangeRefusesTrimmedSequenceNumbersInsteadOfShiftingTheItems() {
    SeqQueue q = numbered(0, 30);
    q.trimBelow(10);
    // Clamping to the first kept item would hand item 10 out under the number 0.
    assertThrows(IllegalArgumentException.class, () -> q.range(0, 5));
    assertThrows(IllegalArgumentException.class, () -> q.range(9, 5));
    assertEquals(List.of("item 10"), q.range(10, 1));
  }
}
