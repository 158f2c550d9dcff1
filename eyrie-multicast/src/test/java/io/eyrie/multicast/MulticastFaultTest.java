package io.eyrie.multicast;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.testing.MulticastChecker;
import io.eyrie.multicast.testing.MulticastWorkload;
import io.eyrie.multicast.testing.RecordingDeliverer;
import io.eyrie.multicast.testing.Waits;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The multicast properties hold while nodes crash and restart: a group leader's node in the
 * middle of a run, and the whole cluster. No acknowledged message is lost and delivery goes on.
 */
@Timeout(300)
class MulticastFaultTest {
  /** This test's seed (JUnit makes an instance per test), printed for a replay. */
  private final long seed = MulticastPropertyTest.seed();

  private static EmbeddedCluster cluster() {
    return EmbeddedCluster.newBuilder().nodes(3).partitions(4)
        .options(NodeOptions.newBuilder().snapshotThreshold(200).segmentSizeMax(64 << 10)
            .electionTimeoutMs(600, 1200).build())
        .deliverers((g, cl, codec) -> new RecordingDeliverer()).start();
  }

  /**
   * Starts the workload on a thread of its own, waits until more than {@code 1/part} of it has
   * completed, and returns that thread.
   */
  private static Thread runInBackground(MulticastWorkload w, int part, String progress) {
    Thread run = new Thread(() -> {
      try {
        w.run();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    run.start();
    Waits.until(Duration.ofSeconds(60), () -> w.completed.get() > w.total() / part, () -> progress);
    return run;
  }

  @Test
  void leaderNodeKilledAndRestartedMidRun() throws Exception {
    try (EmbeddedCluster c = cluster()) {
      MulticastWorkload w = new MulticastWorkload(c, seed, 4, 150, 6);
      Thread run = runInBackground(w, 4, "progress before the kill");
      int victim = c.leaderOf(GroupId.valueOf("p1"));
      assertTrue(victim > 0, "p1 has a leader");
      System.out.println("killing node " + victim + " (leader of p1) after " + w.completed.get() + " completions");
      c.kill(victim);
      int before = w.completed.get();
      Waits.until(Duration.ofSeconds(60), () -> w.completed.get() > before + 50, () -> "progress without node " + victim);
      c.restart(victim);
      run.join(Duration.ofMinutes(4).toMillis());
      System.out.println("acked " + w.acked.size() + " of " + w.total() + ", failed " + w.failed.size());
      MulticastChecker.awaitAndCheck(c, w.destsOf, w.acked, Duration.ofSeconds(90));
      afterRestartDeliveryContinues(c, seed);
    }
  }

  @Test
  void wholeClusterKilledAndRestartedMidRun() throws Exception {
    try (EmbeddedCluster c = cluster()) {
      MulticastWorkload first = new MulticastWorkload(c, seed, 3, 120, 6);
      Thread run = runInBackground(first, 3, "progress");
      System.out.println("killing every node after " + first.completed.get() + " completions");
      c.killAll();
      c.restartAll();
      c.awaitLeaders(Duration.ofSeconds(60));
      run.join(Duration.ofMinutes(4).toMillis());
      System.out.println("acked " + first.acked.size() + " of " + first.total() + ", failed " + first.failed.size());
      MulticastChecker.awaitAndCheck(c, first.destsOf, first.acked, Duration.ofSeconds(90));
      afterRestartDeliveryContinues(c, seed);
    }
  }

  /** A new client's multicast to every group is delivered everywhere after the faults. */
  private static void afterRestartDeliveryContinues(EmbeddedCluster c, long seed) throws Exception {
    try (MulticastClient client = c.newClient()) {
      long token = 1L << 62 | (seed & 0xffff);
      Set<GroupId> all = c.cluster().groupIds();
      client.multicast(all, token).get(60, java.util.concurrent.TimeUnit.SECONDS);
      Waits.until(Duration.ofSeconds(60), () -> MulticastChecker.sequences(c).values().stream()
          .allMatch(m -> m.values().stream().allMatch(seq -> seq.contains(token))), () -> "delivery after restart");
    }
  }
}
