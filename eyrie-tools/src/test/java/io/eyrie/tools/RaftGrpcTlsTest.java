package io.eyrie.tools;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.GroupStatus;
import io.eyrie.multicast.NodeOptions.RaftTransport;
import io.eyrie.multicast.TlsConfig;
import io.eyrie.multicast.testing.GrpcEchoCluster;
import io.eyrie.multicast.testing.RawConnection;
import io.eyrie.multicast.testing.TestGroups;
import io.eyrie.multicast.testing.Waits;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mutual TLS on Ratis's gRPC transport ({@link RaftTransport#GRPC}) of a 3-node cluster whose
 * nodes have certificates (real handshakes on loopback): the groups replicate over it and serve
 * single- and two-group multicasts, also after a leader is killed and restarted; a TLS connection
 * with a node's certificate gets HTTP/2 from the Raft port (so it is gRPC, and TLS took the
 * certificate), while a client's or an admin's certificate (counted as the Raft port's TLS
 * refusals), none, or plaintext get nothing; a node
 * reads the status over gRPC and TLS, and an admin through a node (which follows its transport).
 */
@Timeout(300)
class RaftGrpcTlsTest {
  private static final Duration WAIT = GrpcEchoCluster.WAIT;

  @TempDir
  static Path tmp;
  private static Path dir;
  @AutoClose
  private static GrpcEchoCluster grpc;

  @BeforeAll
  static void certificatesAndCluster() throws Exception {
    dir = ClientTlsTest.clusterCerts(tmp);
    grpc = GrpcEchoCluster.tls(dir, "client-app");
  }

  /**
   * True if the Raft port of {@code node}, over TLS as {@code name} (with its key if {@code
   * withKey}), offering HTTP/2 by ALPN, answers an HTTP/2 preface with a SETTINGS frame; false if
   * the handshake or the connection fails.
   */
  private static boolean http2OverTls(int node, String name, boolean withKey) throws Exception {
    SSLContext ctx = ClientTlsTest.sslContext(TlsConfig.fromDir(dir, name), withKey);
    try (SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket()) {
      SSLParameters p = s.getSSLParameters();
      p.setApplicationProtocols(new String[] {"h2"});
      s.setSSLParameters(p);
      s.connect(new InetSocketAddress("127.0.0.1", grpc.raftPort(node)), 5000);
      return RawConnection.answersHttp2Settings(s);
    } catch (IOException e) {
      return false;
    }
  }

  private static void multicastsServed(String tag) throws Exception {
    grpc.echoed(tag, Set.of(grpc.p0), Set.of(grpc.p0, grpc.p1));
  }

  @Test
  @Timeout(120)
  void aNodeCertificateGetsGrpcOverTlsAndOthersAreRefused() throws Exception {
    for (int n : grpc.cluster.cluster().nodes().keySet()) {
      assertTrue(http2OverTls(n, "node-2", true), "node " + n + ": a node's certificate gets HTTP/2 over TLS");
    }
    long refusedBefore = grpc.cluster.node(1).raftPortStats().tlsRefusals();
    assertFalse(http2OverTls(1, "client-app", true), "a client's certificate is refused on the Raft port");
    assertFalse(http2OverTls(1, "admin-ops", true), "an admin's certificate is refused on the Raft port");
    Waits.until(WAIT, () -> grpc.cluster.node(1).raftPortStats().tlsRefusals() >= refusedBefore + 2,
        () -> "the two refused certificates counted: " + grpc.cluster.node(1).raftPortStats());
    assertFalse(http2OverTls(1, "client-app", false), "no certificate is refused on the Raft port");
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", grpc.raftPort(1)), 5000);
      assertFalse(RawConnection.answersHttp2Settings(s),
          "a plaintext HTTP/2 connection gets nothing from a TLS Raft port");
    }
    assertTrue(http2OverTls(1, "node-3", true), "still a node's certificate is served after the refusals");
    multicastsServed("after-refusals");
  }

  @Test
  @Timeout(240)
  void multicastsAreServedAlsoAfterALeaderIsKilledAndRestarted() throws Exception {
    multicastsServed("before");
    int victim = TestGroups.killLeaderAndAwaitAnother(grpc.cluster, grpc.p0, WAIT);
    multicastsServed("killed");
    grpc.cluster.restart(victim);
    grpc.cluster.awaitLeaders(WAIT);
    multicastsServed("restarted");
  }

  @Test
  @Timeout(120)
  void aNodeReadsTheStatusOverGrpcAndTlsAnAdminThroughANode() {
    for (String who : List.of("node-3", "admin-ops")) {
      TlsConfig tls = TlsConfig.fromDir(dir, who);
      Waits.until(WAIT, () -> {
        List<GroupStatus> all = GroupStatus.query(grpc.cluster.cluster(), 3000, tls, RaftTransport.GRPC);
        return all.size() == 2 && all.stream().allMatch(g -> g.leader() != 0
            && g.replicas().stream().allMatch(GroupStatus.Replica::reachable));
      }, () -> who + " sees every group led and every replica");
    }
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> GroupStatus.query(grpc.cluster.cluster(), 3000, TlsConfig.fromDir(dir, "client-app"),
            RaftTransport.GRPC));
    assertTrue(e.getMessage().contains("forbidden"), e.getMessage());
  }
}
