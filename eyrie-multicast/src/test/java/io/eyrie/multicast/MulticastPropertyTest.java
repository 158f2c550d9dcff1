package io.eyrie.multicast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.testing.MulticastChecker;
import io.eyrie.multicast.testing.MulticastWorkload;
import io.eyrie.multicast.testing.RecordingDeliverer;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Atomic multicast properties on a real cluster: 3 nodes, 4 groups of 3 replicas, concurrent
 * clients multicasting to random subsets. Replay a failure with -Deyrie.seed=N.
 */
@Timeout(300)
class MulticastPropertyTest {

  static long seed() {
    long seed = Long.getLong("eyrie.seed", System.nanoTime());
    System.out.println("MulticastPropertyTest seed=" + seed + " (replay with -Deyrie.seed=" + seed + ")");
    return seed;
  }

  @Test
  void concurrentClientsToRandomSubsets() throws Exception {
    run(NodeOptions.defaults());
  }

  /** The same with every write through a Ratis client, none handed to the local leader replica. */
  @Test
  void concurrentClientsToRandomSubsetsThroughClientsOnly() throws Exception {
    run(NodeOptions.newBuilder().localSubmit(false).build());
  }

  private static void run(NodeOptions options) throws Exception {
    long seed = seed();
    try (EmbeddedCluster c = EmbeddedCluster.newBuilder().nodes(3).partitions(4).options(options)
        .deliverers((g, cl, codec) -> new RecordingDeliverer()).start()) {
      MulticastWorkload w = new MulticastWorkload(c, seed, 4, 150, 8);
      w.run();
      assertEquals(w.total(), w.acked.size(), "every multicast of a healthy cluster is acknowledged; failed: " + w.failed);
      MulticastChecker.awaitAndCheck(c, w.destsOf, w.acked, Duration.ofSeconds(60));
      long multi = w.destsOf.values().stream().filter(d -> d.size() > 1).count();
      assertTrue(multi > w.total() / 2, "the workload must exercise multi-group messages");
      long local = c.runningNodes().values().stream().mapToLong(n -> n.traffic().localWrites()).sum();
      long entries = c.runningNodes().values().stream().mapToLong(n -> n.traffic().logEntries()).sum();
      if (options.localSubmit()) {
        assertTrue(local > 0 && local < entries,
            "writes to groups a node leads go to its replica, the others through clients: " + local + " of " + entries);
      } else {
        assertEquals(0, local, "no local writes when they are off");
      }
      NodeStats.Group st = c.node(1).stats(GroupId.valueOf("p0"));
      System.out.println("p0 at node 1: " + st + "; traffic " + c.node(1).traffic());
    }
  }
}
