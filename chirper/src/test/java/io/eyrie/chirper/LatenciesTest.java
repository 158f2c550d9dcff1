package io.eyrie.chirper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** HdrHistogram-backed latencies: whole-run and per-interval percentiles within 0.1%. */
@Timeout(30)
class LatenciesTest {

  @Test
  void wholeRunAndIntervals() {
    Latencies l = new Latencies();
    assertTrue(Double.isNaN(l.quantilesMs(0.5)[0]));
    for (int ms = 1; ms <= 1000; ms++) {
      l.add(ms * 1_000_000L);
    }
    double[] q = l.intervalQuantilesMs(0.5, 0.99);
    assertEquals(500, q[0], 0.5);
    assertEquals(990, q[1], 1.0);
    for (int i = 0; i < 100; i++) {
      l.add(2_000_000_000L);
    }
    assertEquals(2000, l.intervalQuantilesMs(0.5)[0], 2.0, "the interval holds only the new values");
    assertTrue(Double.isNaN(l.intervalQuantilesMs(0.5)[0]), "and a new interval starts empty");
    assertEquals(1100, l.size());
    assertEquals(2000, l.quantilesMs(0, 1.0)[0], 2.0);
    assertEquals(550, l.quantilesMs(0.5)[0], 0.6);
  }
}
