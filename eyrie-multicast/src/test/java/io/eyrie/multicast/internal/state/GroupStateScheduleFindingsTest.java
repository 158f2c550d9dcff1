package io.eyrie.multicast.internal.state;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.eyrie.multicast.testing.ExpectedErrors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * FINDINGS, failing on purpose: retention of a reused id (rules 8 and 12, K4, K9) can leak. The
 * schedules are those of {@link GroupStateScheduleTest#reusedIdOverlappingDestinations} and
 * {@link GroupStateScheduleTest#reusedIdAfterRetentionDrop}, which pass on ordering (no group
 * executes a version whose destinations hold another, none stalls); run to the end, a retention
 * entry stays for ever, because a group waits for a {@code Decided} that no rule makes the other
 * version's holder send. Each needs a design decision, so neither is fixed here.
 */
@Timeout(60)
@ExpectedErrors({SimChecks.REUSED_ID_ERRORS, "dropping a conflict"})
class GroupStateScheduleFindingsTest {

  /**
   * g0 holds X to {g0, g1, g2}, g2 holds Y to {g1, g2}. g2 decides Y, records g1's Decided and
   * drops Y (its own destinations are done) before g0's Decided(X) reaches it; g2 then has no
   * entry and answers nothing (K9's "answer at once" needs the entry), so g0 keeps X waiting
   * for g2's Decided for ever.
   */
  @Test
  void reusedIdOverlappingDestinationsRetentionEnds() {
    assertRetentionEnds(GroupStateScheduleTest.reusedIdOverlapping());
  }

  /**
   * X to {g0, g1} is done and forgotten at g1; Y to {g1, g2} follows. g2 forwards Y to g1, which
   * answers the Propose with Conflict (K4) and, holding no entry, never sends a Decided of the
   * id; g2 keeps Y waiting for g1's Decided for ever.
   */
  @Test
  void reusedIdAfterRetentionDropRetentionEnds() {
    assertRetentionEnds(GroupStateScheduleTest.reusedIdAfterDrop());
  }

  /** Runs the schedule to the end; then no group's leader retains anything. */
  private static void assertRetentionEnds(SimWorkload w) {
    w.drainOrFail();
    for (int g = 0; g < 3; g++) {
      assertEquals(0, w.sim.lead(g).retainedCount());
    }
  }
}
