package io.eyrie.multicast.internal.state;

import static io.eyrie.multicast.internal.state.RulesSupport.G0;
import static io.eyrie.multicast.internal.state.RulesSupport.G1;
import static io.eyrie.multicast.internal.state.RulesSupport.G2;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.Execution;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.internal.Wire.Data;
import io.eyrie.multicast.internal.Wire.Start;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Rule 11's positive evidence for "started" (K7 blocked-is-not-started): a message the
 * application answered {@code blocked} reached the head but did not start, so a StartedQuery
 * must not be answered "started" for it, until it really starts. With the positive control
 * (blocked taken as started) the check fails.
 */
@Timeout(30)
class GroupStateStartedEvidenceTest {
  private final RulesSupport t = new RulesSupport();

  /** Mode 1: resumeLater waiting for g2; mode 2: blocked while anything waits off the queue. */
  static final class BlockingApp extends RulesSupport.LoggingApp {
    boolean waiting;

    @Override
    public Execution deliver(ExecutionContext ctx) {
      long mode = ((long[]) ctx.payload())[1];
      log.add("deliver " + ctx.id());
      if (mode == 1) {
        waiting = true;
        return Execution.resumeLater(List.of(G2));
      }
      if (mode == 2 && waiting) {
        log.add("blocked " + ctx.id());
        return Execution.blocked();
      }
      return Execution.reply(1L);
    }

    @Override
    public Execution resume(ExecutionContext ctx) {
      waiting = false;
      log.add("resume " + ctx.id());
      return Execution.reply(2L);
    }
  }

  private void blockedIsNotStarted() {
    BlockingApp app = new BlockingApp();
    GroupState g1 = t.group(G1, app);
    Start x = t.start(1, 1, G1, G1, G2);
    Start m = t.start(2, 2, G0, G0, G1);
    t.submit(g1, x, m);
    t.decide(g1, x, 1);
    t.decide(g1, m, 1);
    assertTrue(app.log.contains("blocked " + m.id()), () -> "m was deferred: " + app.log);
    assertTrue(g1.started(x.id()), "x waits off the queue: started");
    assertFalse(g1.started(m.id()), "K7: m answered blocked, so it has not started at g1");
    RulesSupport.ship(g1, G2, 0, new Data(x.id(), t.codec.encode(5L)));
    assertTrue(g1.started(m.id()), "m started (and finished) once x completed: " + app.log);
    assertEquals(0, g1.queuedCount());
  }

  @Test
  void blockedIsNotStarted_K7() {
    blockedIsNotStarted();
  }

  /** Positive control: taking a blocked (deferred) message for started is caught. */
  @Test
  void controlBlockedTakenAsStartedIsCaught() {
    Decisions.blockedCountsAsStartedForTest = true;
    try {
      assertThrows(AssertionError.class, this::blockedIsNotStarted);
    } finally {
      Decisions.blockedCountsAsStartedForTest = false;
    }
  }
}
