package io.eyrie.multicast;

import io.eyrie.multicast.NodeOptions.RaftTransport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.testing.GrpcEchoCluster;
import io.eyrie.multicast.testing.MulticastChecker;
import io.eyrie.multicast.testing.MulticastWorkload;
import io.eyrie.multicast.testing.RecordingDeliverer;
import io.eyrie.multicast.testing.RawConnection;
import io.eyrie.multicast.testing.TestGroups;
import io.eyrie.multicast.testing.Waits;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A 3-node cluster whose Raft ports run Ratis's gRPC transport ({@link RaftTransport#GRPC}, on
 * real loopback sockets, in plaintext; TLS is eyrie-tools' {@code RaftGrpcTlsTest}, which has the
 * certificates): every Raft port speaks HTTP/2 (so the option took effect: Eyrie's Netty RPC
 * sends nothing first), single- and two-group multicasts are served, the groups' status is read
 * over gRPC, and after a leader is killed and restarted the cluster still serves; and, on a cluster
 * of its own, a lagging replica of three groups catches up by concurrent snapshot installations.
 */
@Timeout(300)
class RaftGrpcTransportTest {
  private static final Duration WAIT = GrpcEchoCluster.WAIT;
  @AutoClose
  private static GrpcEchoCluster grpc;

  @BeforeAll
  static void start() {
    grpc = GrpcEchoCluster.plaintext();
  }

  private static boolean speaksHttp2(int node) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", grpc.raftPort(node)), 5000);
      return RawConnection.answersHttp2Settings(s);
    } catch (IOException e) {
      return false;
    }
  }

  private static void multicastsServed(String tag) throws Exception {
    grpc.echoed(tag, Set.of(grpc.p0), Set.of(grpc.p0, grpc.p1), Set.of(grpc.p1));
  }

  @Test
  @Timeout(120)
  void everyRaftPortSpeaksGrpc() {
    assertEquals(RaftTransport.GRPC, grpc.cluster.options().raftTransport());
    for (int n : grpc.cluster.cluster().nodes().keySet()) {
      assertTrue(speaksHttp2(n), "node " + n + "'s Raft port answers an HTTP/2 preface with SETTINGS");
    }
  }

  @Test
  @Timeout(120)
  void singleAndTwoGroupMulticastsAreServed() throws Exception {
    multicastsServed("plain");
  }

  @Test
  @Timeout(120)
  void theStatusIsReadOverGrpcAndNotOverNetty() {
    Waits.until(WAIT, () -> {
      List<GroupStatus> all = GroupStatus.query(grpc.cluster.cluster(), 3000, null, RaftTransport.GRPC);
      return all.stream().allMatch(g -> g.leader() != 0
          && g.replicas().stream().allMatch(GroupStatus.Replica::reachable));
    }, () -> "every group led and every replica reachable over gRPC");
    // The control: a Netty RPC client gets no answer from a gRPC Raft port.
    List<GroupStatus> netty = GroupStatus.query(grpc.cluster.cluster(), 1500, null, RaftTransport.NETTY);
    assertFalse(netty.stream().anyMatch(g -> g.replicas().stream().anyMatch(GroupStatus.Replica::reachable)),
        "a Netty RPC client reaches no gRPC Raft port: " + netty);
  }

  @Test
  @Timeout(240)
  void aKilledAndRestartedLeaderLeavesTheClusterServing() throws Exception {
    multicastsServed("before");
    int victim = TestGroups.killLeaderAndAwaitAnother(grpc.cluster, grpc.p0, WAIT);
    assertNotEquals(victim, grpc.cluster.leaderOf(grpc.p0));
    multicastsServed("killed");
    grpc.cluster.restart(victim);
    Waits.until(WAIT, () -> speaksHttp2(victim), () -> "node " + victim + "'s Raft port back on gRPC");
    grpc.cluster.awaitLeaders(WAIT);
    multicastsServed("restarted");
    // The restarted node catches up over gRPC: its replicas apply what was committed meanwhile.
    Waits.until(WAIT, () -> {
      for (GroupStatus g : GroupStatus.query(grpc.cluster.cluster(), 3000, null, RaftTransport.GRPC)) {
        for (GroupStatus.Replica r : g.replicas()) {
          if (!r.reachable() || g.lag(r) != 0) {
            return false;
          }
        }
      }
      return true;
    }, () -> "every replica, node " + victim + "'s too, reachable and caught up");
  }

  /**
   * Three groups per server install snapshots on one lagging node at once, over gRPC: the case
   * that livelocked Ratis's Netty RPC (call id 0 shared by every group) before {@code
   * EyrieNettyRpc} serialized it; gRPC needs no such help (its own cluster, small snapshots).
   */
  @Test
  @Timeout(240)
  void aLaggingReplicaOfEveryGroupCatchesUpBySnapshotInstallationOverGrpc() throws Exception {
    long seed = MulticastPropertyTest.seed();
    try (EmbeddedCluster c = EmbeddedCluster.newBuilder().nodes(3).partitions(3)
        .options(NodeOptions.newBuilder().raftTransport(RaftTransport.GRPC).snapshotThreshold(40)
            .segmentSizeMax(16 << 10).submitBatchMax(4).build())
        .deliverers((g, cl, codec) -> new RecordingDeliverer()).start()) {
      int lagging = 3;
      c.kill(lagging);
      c.awaitLeaders(WAIT);
      MulticastWorkload w = new MulticastWorkload(c, seed, 3, 250, 4);
      w.run();
      assertEquals(w.total(), w.acked.size(), "acked " + w.acked.size() + " of " + w.total() + "; first failures "
          + w.failures);
      c.restart(lagging);
      MulticastChecker.awaitAndCheck(c, w.destsOf, w.acked, Duration.ofSeconds(120));
      for (GroupId g : c.cluster().groupIds()) {
        assertTrue(c.node(lagging).stats(g).snapshotsInstalled() > 0,
            g + ": the lagging replica caught up through a leader's snapshot, over gRPC");
      }
    }
  }
}
