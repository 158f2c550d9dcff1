package io.eyrie.multicast.internal.state;

import static io.eyrie.multicast.internal.state.GroupStateScheduleTest.G0;
import static io.eyrie.multicast.internal.state.GroupStateScheduleTest.G1;
import static io.eyrie.multicast.internal.state.GroupStateScheduleTest.quiet;
import static io.eyrie.multicast.internal.state.GroupStateScheduleTest.send;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.internal.state.SimWorkload.MsgInfo;
import io.eyrie.multicast.testing.ExpectedErrors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

/**
 * Positive controls of the simulation (design 4.3.2's last paragraph): each weakens one rule and
 * asserts that the simulation fails, next to the same schedule passing with the rule intact (so a
 * check that cannot fail is caught). The K7 control ("blocked taken as started") is in {@link
 * GroupStateStartedEvidenceTest}.
 */
@Timeout(120)
@ExpectedErrors({"disagrees with this group's log", "was delivered here; the id was reused", "dropping a conflict",
    "with other content than the message", "holds another message with the id",
    "without executing it \\(its id was reused\\)"})
class GroupStateSimControlsTest {

  /**
   * Deliver on a missing component: g0 never receives g1's component (every unlogged message to
   * g0 is lost); the weakened leader decides anyway with a made-up timestamp for g1.
   */
  private static void missingComponent(boolean invent) {
    SimWorkload w = quiet(2);
    w.sim.knobs.inventMissing = invent;
    w.sim.unreachable = g -> g == 0;
    w.sim.channelBlocked = (g, h) -> true;
    for (int i = 0; i < 3; i++) {
      send(w, G1, G1); // g1's clock moves ahead of g0's
    }
    send(w, G0, G0, G1);
    w.rounds(20);
    w.sim.knobs.inventMissing = false;
    w.sim.unreachable = g -> false;
    w.sim.channelBlocked = (g, h) -> false;
    w.finish();
  }

  /**
   * Runs a control (a schedule with a rule weakened on purpose) and checks that the checks catch
   * it, by the check meant to.
   *
   * @param what the weakening, for the output
   * @param check what the failure names (the rule or check)
   * @param control the schedule
   */
  private static void assertCaught(String what, String check, Executable control) {
    AssertionError e = assertThrows(AssertionError.class, control);
    System.out.println(what + " caught: " + e.getMessage());
    assertTrue(e.getMessage().contains(check), e::getMessage);
  }

  @Test
  void scheduleWithMissingComponentPasses() {
    missingComponent(false);
  }

  @Test
  void controlDeliverOnMissingComponentIsCaught() {
    AssertionError e = assertThrows(AssertionError.class, () -> missingComponent(true));
    System.out.println("deliver on a missing component caught: " + e.getMessage());
  }

  /** Predict the own lts (H7): two new starts in one batch; the leader assumes clock+1 for both. */
  private static void predict(boolean on) {
    SimWorkload w = quiet(2);
    w.sim.knobs.predictOwn = on;
    send(w, G0, G0, G1);
    send(w, G0, G0, G1);
    w.sim.submit(1, false);
    w.sim.submit(0, false);
    w.sim.submit(0, false);
    w.finish();
  }

  @Test
  void scheduleWithTwoStartsInOneBatchPasses() {
    predict(false);
  }

  @Test
  void controlPredictTheOwnLtsIsCaught() {
    assertCaught("predict the own lts", "H7", () -> predict(true));
  }

  /**
   * H12: g0's clock is ahead (lts 11 for m there, 1 at g1); g1 has not decided m; a client
   * invokes m' to g1 alone after m's reply was released. With the gate the reply waits for g1's
   * start; released at g0's decision, m' overtakes m at g1 and the real-time check fails.
   *
   * @return whether m's reply was released before g1 started m
   */
  static boolean h12(boolean releaseAtDecision) {
    SimWorkload w = quiet(2);
    w.checkBegunAtRelease = false; // the real-time check must catch it
    w.sim.knobs.gateSkipsQueries = releaseAtDecision;
    for (int i = 0; i < 10; i++) {
      w.newMessage(2, new GroupId[] {G0}, G0, SimDeliverer.PLAIN, false, 0);
    }
    w.rounds(2);
    w.sim.channelBlocked = (g, h) -> true;
    w.sim.loseBatch = g -> g == 1 && !w.sim.grp[1].decides.isEmpty();
    MsgInfo m = send(w, G0, G0, G1);
    w.rounds(5);
    boolean early = m.finalReply != null;
    send(w, G1, G1);
    w.rounds(2);
    w.sim.loseBatch = g -> false;
    w.sim.channelBlocked = (g, h) -> false;
    w.finish();
    return early;
  }

  @Test
  void h12EarlyReleaseIsHeldByTheGate() {
    assertFalse(h12(false), "the gate held m's reply until g1 started m");
  }

  @Test
  void controlReleaseAtDecisionIsCaughtByTheRealTimeCheck() {
    assertCaught("release at decision", "real time", () -> h12(true));
  }

  /** K1 with the weakened rule: a lost decision is never appended again; liveness fails. */
  @Test
  void controlNoDecideReappendIsCaught() {
    SimWorkload w = quiet(2);
    w.sim.knobs.decideOnce = true;
    int[] lost = new int[2];
    w.sim.loseBatch = g -> !w.sim.grp[g].decides.isEmpty() && lost[g]++ == 0;
    send(w, G0, G0, G1);
    w.rounds(5);
    w.sim.loseBatch = g -> false;
    AssertionError e = assertThrows(AssertionError.class, w::finish);
    System.out.println("no Decide re-append caught: " + e.getMessage().lines().findFirst().orElse(""));
    assertTrue(e.getMessage().contains("liveness"), e::getMessage);
  }

  /**
   * Rule 8's GC safety: g1 never hears from g0 (unlogged messages to g1 are lost), so after
   * T_fwd it forwards m to g0 (the channels are held); meanwhile g0 decides (it has g1's
   * component) and delivers m. The Propose must find m still retained at g0.
   */
  private static void proposeAfterDelivery(boolean dropAtDelivery) {
    Retention.dropAtDeliveryForTest = dropAtDelivery;
    try {
      SimWorkload w = quiet(2);
      w.sim.unreachable = g -> g == 1;
      w.sim.channelBlocked = (g, h) -> true;
      MsgInfo m = send(w, G0, G0, G1);
      w.rounds(130);
      assertTrue(GroupStateScheduleTest.forwards(w, 1, m.start.id()) > 0, "g1 forwarded m");
      w.sim.unreachable = g -> false;
      w.sim.channelBlocked = (g, h) -> false;
      w.finish();
    } finally {
      Retention.dropAtDeliveryForTest = false;
    }
  }

  @Test
  void proposeAfterDeliveryFindsTheMessageRetained() {
    proposeAfterDelivery(false);
  }

  @Test
  void controlDropRetentionAtDeliveryIsCaught() {
    assertCaught("drop retention at delivery", "rule 8", () -> proposeAfterDelivery(true));
  }

  /**
   * forward-retry-in-later-term (K5): g1 never answers (unreachable), so g0 forwards m; every
   * start batch of g0 is appended twice (a Ratis retry), so its Forward is applied twice, and a
   * leader change makes the new leader log it again. At most one Propose per (m, g1).
   */
  private static void forwardTwice(boolean everyTime) {
    Decisions.forwardEveryTimeForTest = everyTime;
    try {
      SimWorkload w = quiet(2);
      w.sim.knobs.batchDupPct = 100;
      MsgInfo m = w.newMessage(1, new GroupId[] {G0, G1}, G0, SimDeliverer.PLAIN, false, 0);
      w.sim.grp[1].starts.clear();
      w.sim.unreachable = g -> g == 1;
      w.sim.channelBlocked = (g, h) -> true;
      for (int i = 0; i < 240; i++) {
        if (i == 120) {
          w.sim.changeLeader(0);
        }
        w.sim.now += 10 * SimGroups.MS;
        w.sim.tick(0);
        w.sim.submit(0, true); // appended twice
        w.sim.catchUpAll();
      }
      assertTrue(GroupStateScheduleTest.forwards(w, 0, m.start.id()) >= 2, "the Forward was applied more than once");
      w.sim.knobs.batchDupPct = 0;
      w.sim.unreachable = g -> false;
      w.sim.channelBlocked = (g, h) -> false;
      w.finish();
      int proposes = w.sim.proposesAt.get(m.start.id())[1];
      assertTrue(proposes == 1, "K5: " + proposes + " Proposes of " + m.start.id() + " at g1");
    } finally {
      Decisions.forwardEveryTimeForTest = false;
    }
  }

  @Test
  void forwardAppliedTwiceProposesOnce() {
    forwardTwice(false);
  }

  @Test
  void controlForwardNotLimitedPerMessageAndGroupIsCaught() {
    assertCaught("Forward not limited", "K5", () -> forwardTwice(true));
  }
}
