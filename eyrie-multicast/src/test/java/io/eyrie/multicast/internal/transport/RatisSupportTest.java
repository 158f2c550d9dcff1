package io.eyrie.multicast.internal.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.multicast.NodeOptions.RaftTransport;
import java.io.File;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.grpc.client.GrpcClientRpc;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The Ratis settings a node runs with, where Ratis's defaults hurt availability. */
@Timeout(30)
class RatisSupportTest {
  @Test
  void steppedDownLeaderStandsAgainAfterOneElectionTimeout() {
    NodeOptions o = NodeOptions.newBuilder().electionTimeoutMs(700, 1400).build();
    RaftProperties p = RatisSupport.serverProperties(new ClusterConfig.NodeInfo(1, "127.0.0.1", 1, 2),
        new File("unused"), o);
    // Ratis's default is 10 s, during which a group whose leader stepped down has no leader.
    assertEquals(1400, RaftServerConfigKeys.LeaderElection.leaderStepDownWaitTime(p).toLong(TimeUnit.MILLISECONDS));
    assertEquals(700, RaftServerConfigKeys.Rpc.timeoutMin(p).toLong(TimeUnit.MILLISECONDS));
    assertEquals(1400, RaftServerConfigKeys.Rpc.timeoutMax(p).toLong(TimeUnit.MILLISECONDS));
  }

  @Test
  void grpcServesOnTheRaftPortAloneWithTheFrameLimitAsItsMessageSize() {
    ClusterConfig.NodeInfo node = new ClusterConfig.NodeInfo(1, "127.0.0.1", 7101, 7201);
    NodeOptions o = NodeOptions.newBuilder().raftTransport(RaftTransport.GRPC).maxFrameBytes(64 << 20).build();
    RaftProperties p = RatisSupport.serverProperties(node, new File("unused"), o);
    assertEquals(SupportedRpcType.GRPC, RaftConfigKeys.Rpc.type(p, s -> { }));
    assertEquals(7101, GrpcConfigKeys.Server.port(p));
    assertEquals(7101, GrpcConfigKeys.Admin.port(p), "no separate admin server");
    assertEquals(7101, GrpcConfigKeys.Client.port(p), "no separate client server");
    assertEquals("127.0.0.1", GrpcConfigKeys.Server.host(p));
    assertEquals(RaftFrameLimit.forClientFrames(64 << 20), GrpcConfigKeys.messageSizeMax(p, s -> { }).getSize(),
        "gRPC's message limit is the Raft port's frame limit");
    RaftProperties netty = RatisSupport.serverProperties(node, new File("unused"), NodeOptions.defaults());
    assertEquals(EyrieNettyRpc.class.getName(), RaftConfigKeys.Rpc.type(netty, s -> { }).name());
    assertEquals(NodeOptions.RAFT_TRANSPORT_DEFAULT, RaftTransport.NETTY);
  }

  @Test
  void theNodesRaftClientsSpeakItsTransport() throws Exception {
    ClusterConfig.Builder b = ClusterConfig.newBuilder();
    for (int n = 1; n <= 3; n++) {
      b.node(n, "127.0.0.1", 7100 + n, 7200 + n);
    }
    GroupId g = GroupId.valueOf("p0");
    b.group(g, ClusterConfig.Kind.PARTITION, java.util.List.of(1, 2, 3));
    ClusterConfig c = b.build();
    NodeOptions grpc = NodeOptions.newBuilder().raftTransport(RaftTransport.GRPC).build();
    try (RaftClient client = RatisSupport.newClient(c, g, grpc)) {
      assertInstanceOf(GrpcClientRpc.class, client.getClientRpc(), "start and channel batches, reads, over gRPC");
    }
    try (RaftClient client = RatisSupport.newClient(c, g, NodeOptions.defaults())) {
      assertFalse(client.getClientRpc() instanceof GrpcClientRpc, "Netty by default");
    }
  }

  @Test
  void grpcParametersCarryTlsOnlyWhenTheNodeHasIt() {
    NodeOptions o = NodeOptions.newBuilder().raftTransport(RaftTransport.GRPC).build();
    assertNull(GrpcConfigKeys.Server.tlsConf(RatisSupport.parameters(o, new RaftPortCounters())), "plaintext: no gRPC TLS");
    assertEquals(RaftFrameLimit.MAX_FRAME_BYTES, RaftFrameLimit.of(RatisSupport.parameters(o, new RaftPortCounters())));
  }

  @Test
  void transportLabelsParseInAnyCaseAndOthersAreRefused() {
    assertEquals(RaftTransport.GRPC, RaftTransport.of(" GRPC "));
    assertEquals(RaftTransport.NETTY, RaftTransport.of("netty"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RaftTransport.of("http"));
    assertEquals("expects netty or grpc, not 'http'", e.getMessage());
  }
}
