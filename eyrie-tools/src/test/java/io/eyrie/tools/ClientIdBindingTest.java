package io.eyrie.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.Codec;
import io.eyrie.multicast.CodecRegistry;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.MulticastClient;
import io.eyrie.multicast.Node;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.TlsConfig;
import io.eyrie.multicast.testing.RawConnection;
import io.eyrie.multicast.testing.RecordingDeliverer;
import io.eyrie.multicast.testing.Waits;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client's id bound to its certificate (issue 28, item 2), on a 3-node multicast cluster with
 * mutual TLS on loopback whose one group records the tokens it delivers: a client's own commands
 * run; another client's (or an admin's) multicast under the first one's id, sent as raw frames
 * over its own TLS connection, is refused FORBIDDEN and changes nothing of the first's state; a
 * node may send under any id. Uses {@link ClientTlsTest}'s TLS fixtures.
 */
@Timeout(300)
class ClientIdBindingTest {
  private static final GroupId P0 = GroupId.valueOf("p0");
  /** The group p0's deliverers, one a node. */
  private static final List<RecordingDeliverer> AT = new CopyOnWriteArrayList<>();
  private static final Codec CODEC = new Codec(CodecRegistry.empty());
  private static final long WAIT_S = 60;
  private static EmbeddedCluster cluster;
  private static Path dir;

  @TempDir
  static Path tmp;

  @BeforeAll
  static void certificatesAndCluster() {
    dir = tmp.resolve("certs");
    ClientTlsTest.certs("--out", dir.toString(), "--nodes", "1,2,3", "--admin", "ops", "--client", "a,b");
    cluster = EmbeddedCluster.newBuilder().nodes(3).partitions(1).oracle(false).tls(dir)
        .deliverers((g, cl, codec) -> {
          RecordingDeliverer d = new RecordingDeliverer();
          AT.add(d);
          return d;
        }).start();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static long forbiddenCount() {
    long n = 0;
    for (Node node : cluster.runningNodes().values()) {
      n += node.endpointStats().forbidden();
    }
    return n;
  }

  /** Sends one multicast of {@code token} to p0 under {@code id} as {@code who}, in raw frames; returns the reply. */
  private static Object raw(String who, MsgId id, long token, long watermark) throws Exception {
    Waits.until(Duration.ofSeconds(30), () -> cluster.leaderOf(P0) != 0, () -> "p0 led");
    int port = cluster.cluster().node(cluster.leaderOf(P0)).clientPort();
    try (SSLSocket s = ClientTlsTest.tlsSocket(ClientTlsTest.sslContext(TlsConfig.fromDir(dir, who), true), port);
         RawConnection c = new RawConnection(s, CODEC)) {
      c.sendMulticast(id, new GroupId[] {P0}, P0, CODEC.encode(token), watermark);
      return c.receive();
    }
  }

  @Test
  @Timeout(120)
  void aClientRunsItsCommandsAndNobodyElseMayUseItsId() throws Exception {
    try (MulticastClient a = cluster.newClient(TlsConfig.fromDir(dir, "client-a"))) {
      TlsConfig aTls = TlsConfig.fromDir(dir, "client-a");
      assertEquals(aTls.identity().clientIdTag(), (int) (a.clientId() >>> 32), "a's id carries a's tag");
      long first = (Long) a.multicast(Set.of(P0), 1001L).get(WAIT_S, TimeUnit.SECONDS);
      assertTrue(AT.stream().anyMatch(d -> d.delivered().contains(1001L)), "a's command ran");

      long refusedBefore = forbiddenCount();
      // b sends under a's id what would be a's next command (seq 1): unchecked, it runs, and a's own
      // seq 1 would then be a reused id (another content) or get b's reply.
      Object forged = raw("client-b", MsgId.valueOf(a.clientId(), 1, 0), 666L, 1);
      assertEquals(Status.FORBIDDEN, RawConnection.status(forged), String.valueOf(forged));
      assertTrue(RawConnection.error(forged).contains("forbidden: identity b (client) may not send for client id "
          + String.format("%016x", a.clientId())), RawConnection.error(forged));
      // An admin acts for itself only, too.
      Object byAdmin = raw("admin-ops", MsgId.valueOf(a.clientId(), 0, 0), 667L, 0);
      assertEquals(Status.FORBIDDEN, RawConnection.status(byAdmin), String.valueOf(byAdmin));
      assertTrue(RawConnection.error(byAdmin).contains("identity ops (admin)"), RawConnection.error(byAdmin));
      Waits.until(Duration.ofSeconds(10), () -> forbiddenCount() >= refusedBefore + 2,
          () -> "the refusals counted in the endpoint's forbidden total");

      // a's state is unchanged: its next command runs under seq 1 and gets its own reply.
      long second = (Long) a.multicast(Set.of(P0), 1002L).get(WAIT_S, TimeUnit.SECONDS);
      assertEquals(first + 1, second, "nothing was delivered between a's two commands");
      Waits.until(Duration.ofSeconds(30), () -> AT.stream().allMatch(d -> d.delivered().contains(1002L)),
          () -> "every replica delivered a's second command");
      for (RecordingDeliverer d : AT) {
        assertTrue(!d.delivered().contains(666L) && !d.delivered().contains(667L), "nothing forged delivered: "
            + d.delivered());
      }
    }
  }

  @Test
  @Timeout(120)
  void aClientsOwnIdsGoThroughRawFramesAndANodeMayUseAnyId() throws Exception {
    TlsConfig b = TlsConfig.fromDir(dir, "client-b");
    long bId = (long) b.identity().clientIdTag() << 32 | 0x1234L;
    Object own = raw("client-b", MsgId.valueOf(bId, 0, 0), 2001L, 0);
    assertEquals(Status.OK, RawConnection.status(own), String.valueOf(own));
    Object asNode = raw("node-2", MsgId.valueOf(0x5151_0000_0000_0001L, 0, 0), 2002L, 0);
    assertEquals(Status.OK, RawConnection.status(asNode), String.valueOf(asNode));
  }

  @Test
  @Timeout(60)
  void withTlsAClientMayNotBeGivenAnotherIdentitysId() {
    TlsConfig a = TlsConfig.fromDir(dir, "client-a");
    long foreign = (long) TlsConfig.fromDir(dir, "client-b").identity().clientIdTag() << 32 | 1;
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> MulticastClient.newBuilder().cluster(cluster.cluster()).tls(a).clientId(foreign).build());
    assertTrue(e.getMessage().contains("is not one of identity a (client)'s"), e.getMessage());
    long own = (long) a.identity().clientIdTag() << 32 | 1;
    try (MulticastClient c = MulticastClient.newBuilder().cluster(cluster.cluster()).tls(a).clientId(own).build()) {
      assertEquals(own, c.clientId());
    }
  }
}
