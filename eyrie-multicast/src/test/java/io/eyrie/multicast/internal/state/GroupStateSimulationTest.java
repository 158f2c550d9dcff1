package io.eyrie.multicast.internal.state;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Deterministic, single-threaded simulation of 4 or 5 groups (each as two replicas in lockstep)
 * driven by a seeded random schedule: client starts to random subsets (submitted to some of the
 * destinations, sometimes resubmitted), channel shipments with duplicates, gaps, stale acks and
 * lost batches (go-back-N), crashes restored from snapshots and leader changes. Each run drains
 * and checks integrity, agreement, identical order at replicas, prefix and acyclic order,
 * execution atomicity, exactly one final reply per message and byte-identical replicas.
 *
 * <p>Replay one run with {@code -Deyrie.sim.seed=N} (the failing seed is in the message); run
 * more with {@code -Deyrie.sim.runs=K -Deyrie.sim.messages=M}. {@code -Deyrie.sim.expiryMs=X} lets
 * idle clients' records expire after X ms of log time (the schedule advances it by about 1.5 ms
 * per step); by default they never do.
 */
@Timeout(120)
class GroupStateSimulationTest {

  @Test
  void randomSchedulesKeepAtomicMulticastProperties() {
    Long fixed = Long.getLong("eyrie.sim.seed");
    long base = fixed != null ? fixed : System.nanoTime();
    int runs = Integer.getInteger("eyrie.sim.runs", fixed != null ? 1 : 200);
    int messages = Integer.getInteger("eyrie.sim.messages", 200);
    long expiryMs = Long.getLong("eyrie.sim.expiryMs", SimGroups.NO_EXPIRY);
    System.out.println("seed=" + base + " runs=" + runs + " messages=" + messages
        + " (replay a run with -Deyrie.sim.seed=<its seed>)");
    long t0 = System.nanoTime();
    long steps = 0;
    long entries = 0;
    long restores = 0;
    long reanswers = 0;
    long stales = 0;
    long parks = 0;
    long faults = 0;
    long dups = 0;
    long refusals = 0;
    long neverStarted = 0;
    for (int i = 0; i < runs; i++) {
      long seed = base + i;
      SimWorkload w = new SimWorkload(seed, 4 + (int) Math.floorMod(seed, 2L), messages, expiryMs);
      try {
        w.run();
      } catch (AssertionError | RuntimeException e) {
        String replay = "-Deyrie.sim.seed=" + seed + (messages != 200 ? " -Deyrie.sim.messages=" + messages : "")
            + (expiryMs != SimGroups.NO_EXPIRY ? " -Deyrie.sim.expiryMs=" + expiryMs : "");
        System.out.println("seed=" + seed + " FAILED after " + w.steps + " steps: " + e);
        throw new AssertionError("seed=" + seed + " (replay with " + replay + "): " + e.getMessage(), e);
      }
      steps += w.steps;
      entries += w.sim.entriesApplied;
      restores += w.sim.restores;
      reanswers += w.reanswers;
      stales += w.stales;
      faults += w.sim.gapsAndDups + w.sim.batchesLost;
      dups += w.dupsSubmitted;
      refusals += w.refusals;
      neverStarted += w.msgs.values().stream().filter(SimWorkload.MsgInfo::refusedEverywhere).count();
      for (int g = 0; g < w.n; g++) {
        parks += w.sim.lead(g).stats().parks;
      }
    }
    System.out.printf("simulated %d runs x %d messages: %d steps, %d entries, %d restores, %d channel faults, "
        + "%d resubmissions, %d re-answers, %d stale answers, %d parks, %d EXPIRED refusals (%d messages refused"
        + " everywhere), %.1f s%n", runs, messages, steps, entries, restores, faults, dups, reanswers, stales, parks,
        refusals, neverStarted, (System.nanoTime() - t0) / 1e9);
    if (runs >= 20) {
      assertTrue(restores > 0 && reanswers > 0 && stales > 0 && parks > 0 && faults > 0 && dups > 0,
          "the schedule must exercise restores, resubmissions, re-answers, stale answers, parks and channel faults");
    }
  }
}
