package io.eyrie.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.Codec;
import io.eyrie.multicast.CodecRegistry;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.MulticastClient;
import io.eyrie.multicast.Node;
import io.eyrie.multicast.NodeStats;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.TlsConfig;
import io.eyrie.multicast.testing.RawConnection;
import io.eyrie.multicast.testing.RecordingDeliverer;
import io.eyrie.multicast.testing.Waits;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The multicast's unlogged questions between leaders (design 4.3.1) travel on Eyrie's own
 * node-to-node link, as the nodes' TLS identities, on a 3-node cluster with mutual TLS on
 * loopback whose two groups are led from different nodes: 2-group multicasts are answered with
 * every question answered by the link (none sent as a Ratis read instead), and only a node may put
 * such a question on a node's client port: a client's forged component is refused FORBIDDEN.
 */
@Timeout(300)
class PeerLinkTest {
  private static final GroupId P0 = GroupId.valueOf("p0");
  private static final GroupId P1 = GroupId.valueOf("p1");
  private static final Codec CODEC = new Codec(CodecRegistry.empty());
  private static EmbeddedCluster cluster;
  /** The run's CA and certificates: nodes 1-3 and client "a". */
  private static Path dir;

  @BeforeAll
  static void certificatesAndCluster(@TempDir Path certs) {
    dir = certs;
    ClientTlsTest.certs("--out", dir.toString(), "--nodes", "1,2,3", "--client", "a");
    cluster = EmbeddedCluster.newBuilder().nodes(3).partitions(2).oracle(false).tls(dir)
        .deliverers((g, cl, codec) -> new RecordingDeliverer()).start();
    // Leaders settle on their preferred nodes, which differ for p0 and p1.
    Waits.until(Duration.ofSeconds(90), () -> cluster.leaderOf(P0) != 0 && cluster.leaderOf(P1) != 0
        && cluster.leaderOf(P0) != cluster.leaderOf(P1), () -> "p0 and p1 led from different nodes: "
        + cluster.leaderOf(P0) + ", " + cluster.leaderOf(P1));
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static long sum(ToLongFunction<NodeStats.Traffic> f) {
    long n = 0;
    for (Node node : cluster.runningNodes().values()) {
      n += f.applyAsLong(node.traffic());
    }
    return n;
  }

  @Test
  @Timeout(120)
  void twoGroupCommandsPutTheirQuestionsOnTheNodeLink() throws Exception {
    long askedBefore = sum(NodeStats.Traffic::peerQuestions);
    long fellBackBefore = sum(NodeStats.Traffic::peerFallbacks);
    try (MulticastClient a = cluster.newClient(TlsConfig.fromDir(dir, "client-a"))) {
      for (long i = 0; i < 40; i++) {
        a.multicast(Set.of(P0, P1), P0, 5000L + i).get(60, TimeUnit.SECONDS);
      }
    }
    long asked = sum(NodeStats.Traffic::peerQuestions) - askedBefore;
    long fellBack = sum(NodeStats.Traffic::peerFallbacks) - fellBackBefore;
    assertTrue(asked >= 40, "each 2-group command led from two nodes asks the other leader at least once: " + asked);
    assertEquals(0, fellBack, "every question was answered by the node link, none through Ratis (of " + asked + ")");
  }

  @Test
  @Timeout(120)
  void onlyANodeMayPutAnExchangeQuestionOnAClientPort() throws Exception {
    int port = cluster.cluster().node(cluster.leaderOf(P0)).clientPort();
    long refusedBefore = 0;
    for (Node node : cluster.runningNodes().values()) {
      refusedBefore += node.endpointStats().forbidden();
    }
    MsgId id = MsgId.valueOf(0x7777_0000_0000_0001L, 0, 0);
    try (SSLSocket s = ClientTlsTest.tlsSocket(ClientTlsTest.sslContext(TlsConfig.fromDir(dir, "client-a"), true), port);
         RawConnection c = new RawConnection(s, CODEC)) {
      // A component is a group's proposal: if a client could push one, it could order messages.
      c.sendComponent(P0, id, P1, 1L);
      Object forged = c.receive();
      assertEquals(Status.FORBIDDEN, RawConnection.status(forged), String.valueOf(forged));
      assertTrue(RawConnection.error(forged).contains("it needs the node role"), RawConnection.error(forged));
      c.sendStartedQuery(P0, id);
      Object asked = c.receive();
      assertEquals(Status.FORBIDDEN, RawConnection.status(asked), String.valueOf(asked));
    }
    try (SSLSocket s = ClientTlsTest.tlsSocket(ClientTlsTest.sslContext(TlsConfig.fromDir(dir, "node-2"), true), port);
         RawConnection c = new RawConnection(s, CODEC)) {
      c.sendStartedQuery(P0, id);
      Object answered = c.receive();
      assertEquals(Status.OK, RawConnection.status(answered), String.valueOf(answered));
    }
    long refused = 0;
    for (Node node : cluster.runningNodes().values()) {
      refused += node.endpointStats().forbidden();
    }
    assertTrue(refused >= refusedBefore + 2, "the refusals are counted: " + refusedBefore + " -> " + refused);
  }
}
