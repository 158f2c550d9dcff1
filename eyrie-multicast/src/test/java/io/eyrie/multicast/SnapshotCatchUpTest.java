package io.eyrie.multicast;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.testing.MulticastChecker;
import io.eyrie.multicast.testing.MulticastWorkload;
import io.eyrie.multicast.testing.RecordingDeliverer;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * With a small snapshot threshold, a replica that was down while the others compacted their
 * logs catches up by snapshot installation and then delivers the same sequence as the others.
 */
@Timeout(300)
class SnapshotCatchUpTest {

  @Test
  void laggingReplicaCatchesUpBySnapshot() throws Exception {
    long seed = MulticastPropertyTest.seed();
    try (EmbeddedCluster c = EmbeddedCluster.newBuilder().nodes(3).partitions(3)
        .options(NodeOptions.newBuilder().snapshotThreshold(40).segmentSizeMax(16 << 10)
            .submitBatchMax(4).build())
        .deliverers((g, cl, codec) -> new RecordingDeliverer()).start()) {
      int lagging = 3;
      c.kill(lagging);
      c.awaitLeaders(Duration.ofSeconds(60));
      MulticastWorkload w = new MulticastWorkload(c, seed, 3, 250, 4);
      w.run();
      // Two of three replicas keep every group available: every multicast is acknowledged. (A
      // timeout here once exposed leaders that refused elections for 10 s after stepping down.)
      assertTrue(w.acked.size() == w.total(), "acked " + w.acked.size() + " of " + w.total()
          + "; failed " + w.failed + "; first failures " + w.failures);
      GroupId p0 = GroupId.valueOf("p0");
      long taken = c.node(1).stats(p0).snapshotsTaken() + c.node(2).stats(p0).snapshotsTaken();
      assertTrue(taken > 0, "the live replicas compacted their logs");
      c.restart(lagging);
      MulticastChecker.awaitAndCheck(c, w.destsOf, w.acked, Duration.ofSeconds(120));
      for (GroupId g : c.cluster().groupIds()) {
        NodeStats.Group st = c.node(lagging).stats(g);
        System.out.println(g + " at the restarted node: " + st);
        assertTrue(st.snapshotsInstalled() > 0, g + ": the lagging replica caught up through a leader's snapshot");
      }
    }
  }
}
