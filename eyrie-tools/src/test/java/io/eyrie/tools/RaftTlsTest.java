package io.eyrie.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Service;
import io.eyrie.examples.bank.BankService;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.GroupStatus;
import io.eyrie.multicast.TlsConfig;
import io.eyrie.multicast.testing.Waits;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.apache.ratis.client.impl.ClientProtoUtils;
import org.apache.ratis.proto.netty.NettyProtos.RaftNettyServerReplyProto;
import org.apache.ratis.proto.netty.NettyProtos.RaftNettyServerRequestProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupListRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mutual TLS on the Raft port of a 3-node cluster whose nodes have certificates (real Ratis
 * groups and real handshakes on loopback): the groups replicate over it and serve commands; a
 * raw connection with a node's certificate gets a Raft request answered, which a plaintext
 * connection, one without a certificate, and ones with a client's or an admin's certificate do
 * not; and the nodes keep serving after those refusals. The groups' status, which an admin
 * cannot ask the Raft ports for, it asks a node for, which asks them as a node.
 */
@Timeout(300)
class RaftTlsTest {
  private static final long WAIT_S = 60;

  @TempDir
  static Path tmp;
  private static Path dir;
  private static Service bank;
  private static EmbeddedCluster cluster;

  @BeforeAll
  static void certificatesAndCluster() throws Exception {
    dir = ClientTlsTest.clusterCerts(tmp);
    bank = new BankService().get();
    cluster = EmbeddedCluster.newBuilder().nodes(3).partitions(2).oracle(true).app(bank).tls(dir).start();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static int raftPort(int node) {
    return cluster.cluster().node(node).raftPort();
  }

  private static void commandsRun(int from) throws Exception {
    try (Client app = Client.newBuilder().cluster(cluster.cluster()).service(bank)
        .tls(TlsConfig.fromDir(dir, "client-app")).totalTimeoutMs(20_000).build()) {
      for (int i = from; i < from + 4; i++) {
        assertTrue(app.sendCreate(Command.create(ObjId.valueOf(i), 10L)).get(WAIT_S, TimeUnit.SECONDS).isOk(),
            "command " + i);
      }
    }
  }

  /**
   * Sends a Raft group-list request to node 1 as Ratis's Netty RPC frames it (a varint length,
   * then the request), and returns the reply, or null if the connection gave none: closed, reset,
   * or refused with a TLS alert.
   */
  private static RaftNettyServerReplyProto askGroups(Socket s) {
    GroupListRequest r = new GroupListRequest(ClientId.randomId(), RaftPeerId.valueOf("n1"), RaftGroupId.emptyGroupId(), 7);
    RaftNettyServerRequestProto frame = RaftNettyServerRequestProto.newBuilder()
        .setGroupListRequest(ClientProtoUtils.toGroupListRequestProto(r)).build();
    try {
      s.setSoTimeout(10_000);
      frame.writeDelimitedTo(s.getOutputStream());
      s.getOutputStream().flush();
      return RaftNettyServerReplyProto.parseDelimitedFrom(s.getInputStream());
    } catch (IOException e) {
      return null;
    }
  }

  private static RaftNettyServerReplyProto askGroupsOverTls(SSLContext ctx) throws IOException {
    try (SSLSocket s = ClientTlsTest.tlsSocket(ctx, raftPort(1))) {
      return askGroups(s);
    }
  }

  private static SSLContext as(String name, boolean withKey) throws Exception {
    return ClientTlsTest.sslContext(TlsConfig.fromDir(dir, name), withKey);
  }

  /** The control: a node's certificate gets the answer, so a refusal below is TLS's doing. */
  private static void aNodeIsAnswered() throws Exception {
    RaftNettyServerReplyProto reply = askGroupsOverTls(as("node-2", true));
    assertNotNull(reply, "a node's certificate gets a Raft reply over TLS");
    assertTrue(reply.hasGroupListReply(), reply.toString());
    assertEquals(3, reply.getGroupListReply().getGroupIdCount(), "the oracle and the two partitions");
  }

  @Test
  @Timeout(120)
  void aClusterWithTlsEverywhereServesMulticasts() throws Exception {
    commandsRun(100);
    aNodeIsAnswered();
  }

  @Test
  @Timeout(120)
  void aPlaintextRaftRequestGetsNoAnswer() throws Exception {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", raftPort(1)), 5000);
      assertNull(askGroups(s), "a plaintext Raft request gets no reply");
    }
    aNodeIsAnswered();
    commandsRun(200);
  }

  @Test
  @Timeout(120)
  void clientAdminAndMissingCertificatesAreRefusedOnTheRaftPort() throws Exception {
    aNodeIsAnswered();
    long before = cluster.node(1).raftPortStats().tlsRefusals();
    assertNull(askGroupsOverTls(as("client-app", true)), "a client's certificate gets no Raft reply");
    assertNull(askGroupsOverTls(as("admin-ops", true)), "an admin's certificate gets no Raft reply");
    assertNull(askGroupsOverTls(as("client-app", false)), "no certificate gets no Raft reply");
    // Each refusal is counted on node 1 (in /metrics as eyrie_raft_refused_total{reason="tls"}).
    Waits.until(Duration.ofSeconds(20), () -> cluster.node(1).raftPortStats().tlsRefusals() >= before + 3,
        () -> "node 1 counted the three refused handshakes: " + cluster.node(1).raftPortStats());
    aNodeIsAnswered();
    commandsRun(300);
  }

  @Test
  @Timeout(120)
  void aNodeAsksTheRaftPortsForTheStatusAnAdminAsksANodeAClientMayNot() throws Exception {
    for (String who : List.of("node-3", "admin-ops")) {
      TlsConfig tls = TlsConfig.fromDir(dir, who);
      // Polled: a group may be between leaders for a moment.
      Waits.until(Duration.ofSeconds(30), () -> {
        List<GroupStatus> all = GroupStatus.query(cluster.cluster(), 3000, tls);
        return all.size() == 3 && all.stream().allMatch(g -> g.leader() != 0
            && g.replicas().stream().allMatch(GroupStatus.Replica::reachable));
      }, () -> who + " sees every group led and every replica");
    }
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> GroupStatus.query(cluster.cluster(), 3000, TlsConfig.fromDir(dir, "client-app")));
    assertTrue(e.getMessage().contains("forbidden: identity app (client) may not query the status"), e.getMessage());
  }
}
