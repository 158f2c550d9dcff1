package io.eyrie.chirper;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.eyrie.chirper.Workload.Kind;
import org.junit.jupiter.api.Test;

/** The mixes' shares, and the draws they map to each kind. */
class WorkloadTest {

  @Test
  void sharesAddUpAndDrawsFallInThem() {
    for (Workload w : Workload.values()) {
      double sum = 0;
      for (Kind k : Kind.values()) {
        sum += w.share(k);
      }
      assertEquals(1.0, sum, 1e-12, w.label());
      // Many draws land in each kind in proportion to its share.
      int n = 100_000;
      int[] counts = new int[Kind.values().length];
      for (int i = 0; i < n; i++) {
        counts[w.pick((i + 0.5) / n).ordinal()]++;
      }
      for (Kind k : Kind.values()) {
        assertEquals(w.share(k), counts[k.ordinal()] / (double) n, 1e-4, w.label() + " " + k.label());
      }
    }
  }

  @Test
  void theMixsBoundaries() {
    assertEquals(Kind.TIMELINE, Workload.MIX.pick(0.0));
    assertEquals(Kind.TIMELINE, Workload.MIX.pick(0.8499));
    assertEquals(Kind.POST, Workload.MIX.pick(0.8501));
    assertEquals(Kind.POST, Workload.MIX.pick(0.9249));
    assertEquals(Kind.FOLLOW, Workload.MIX.pick(0.9251));
    assertEquals(Kind.UNFOLLOW, Workload.MIX.pick(0.9626));
    assertEquals(Kind.UNFOLLOW, Workload.MIX.pick(0.9999));
    assertEquals(Kind.FOLLOW, Workload.FOLLOW.pick(0.4999));
    assertEquals(Kind.UNFOLLOW, Workload.FOLLOW.pick(0.5001));
    assertEquals(Kind.POST, Workload.POST.pick(0.0));
  }
}
