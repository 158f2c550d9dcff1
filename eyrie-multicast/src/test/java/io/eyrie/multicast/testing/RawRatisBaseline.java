package io.eyrie.multicast.testing;

import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.multicast.NodeOptions.RaftTransport;
import io.eyrie.multicast.internal.transport.RatisSupport;
import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.util.TimeDuration;

/**
 * The limit for one group on this machine: one Ratis group of 3 servers on loopback (Netty
 * RPC by default, or gRPC; on-disk log) whose state machine does nothing, driven by async clients, one Ratis request
 * per operation.
 */
public final class RawRatisBaseline implements AutoCloseable {
  private final List<RaftServer> servers = new ArrayList<>();
  private final RaftGroup group;
  private final File dir;

  /** A state machine that applies nothing and answers an empty message. */
  static final class NoopStateMachine extends BaseStateMachine {
    private static final CompletableFuture<Message> EMPTY = CompletableFuture.completedFuture(Message.EMPTY);

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
      updateLastAppliedTermIndex(trx.getLogEntry().getTerm(), trx.getLogEntry().getIndex());
      return EMPTY;
    }
  }

  private static final java.util.logging.Logger SHADED_NETTY_LOG =
      java.util.logging.Logger.getLogger("org.apache.ratis.thirdparty.io.netty");

  /**
   * Starts the group: 3 servers on loopback with on-disk logs in a temporary directory, and the
   * same Ratis server settings as Eyrie's groups ({@link RatisSupport#serverProperties}: its
   * Netty RPC, timeouts, log and snapshot settings), so that the baseline differs from a
   * partition only in what runs above Ratis.
   */
  public RawRatisBaseline() throws IOException {
    this(NodeOptions.RAFT_TRANSPORT_DEFAULT);
  }

  /**
   * As {@link #RawRatisBaseline()}, on {@code transport} (Eyrie's Netty RPC, or Ratis's gRPC to
   * compare them; plaintext either way).
   *
   * @param transport the servers' and clients' transport
   * @throws IOException if a server does not start
   */
  public RawRatisBaseline(RaftTransport transport) throws IOException {
    options = OPTIONS.toBuilder().raftTransport(transport).build();
    RatisSupport.configureJvm();
    SHADED_NETTY_LOG.setLevel(java.util.logging.Level.WARNING);
    dir = Files.createTempDirectory("eyrie-raw-ratis-").toFile();
    List<RaftPeer> peers = new ArrayList<>();
    List<ClusterConfig.NodeInfo> nodes = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      int port;
      try (ServerSocket s = new ServerSocket(0)) {
        port = s.getLocalPort();
      }
      nodes.add(new ClusterConfig.NodeInfo(i, "127.0.0.1", port, 0));
      peers.add(RaftPeer.newBuilder().setId(RatisSupport.peerId(i)).setAddress("127.0.0.1:" + port).build());
    }
    group = RaftGroup.valueOf(RaftGroupId.valueOf(UUID.randomUUID()), peers);
    for (ClusterConfig.NodeInfo n : nodes) {
      RaftProperties props = RatisSupport.serverProperties(n, new File(dir, "n" + n.id()), options);
      RaftServer s = RaftServer.newBuilder().setServerId(RatisSupport.peerId(n.id()))
          .setGroup(group).setProperties(props).setStateMachine(new NoopStateMachine()).build();
      s.start();
      servers.add(s);
    }
  }

  private static final NodeOptions OPTIONS = NodeOptions.newBuilder().build();
  private final NodeOptions options;

  /** A client of the group, configured like the nodes' Ratis clients. */
  public RaftClient newClient() {
    RaftProperties props = new RaftProperties();
    if (options.raftTransport() == RaftTransport.GRPC) {
      RatisSupport.clientRpc(props, null, RaftTransport.GRPC);
    } else {
      RaftConfigKeys.Rpc.setType(props, SupportedRpcType.NETTY);
    }
    RaftClientConfigKeys.Rpc.setRequestTimeout(props,
        TimeDuration.valueOf(OPTIONS.ratisRequestTimeoutMs(), TimeUnit.MILLISECONDS));
    RaftClientConfigKeys.Async.setOutstandingRequestsMax(props, 256);
    return RaftClient.newBuilder().setProperties(props).setRaftGroup(group).build();
  }

  /**
   * Sends one request and completes off Ratis's client threads: a load generator that sends the
   * next request from the completion of the previous one must not do so on the thread that
   * delivers Ratis replies.
   */
  public CompletableFuture<?> send(RaftClient c, Message m) {
    return c.async().send(m).whenCompleteAsync((r, e) -> {}, callbacks);
  }

  private final java.util.concurrent.ExecutorService callbacks = java.util.concurrent.Executors.newFixedThreadPool(2, r -> {
    Thread t = new Thread(r, "raw-ratis-callbacks");
    t.setDaemon(true);
    return t;
  });

  @Override
  public void close() throws IOException {
    callbacks.shutdownNow();
    for (RaftServer s : servers) {
      s.close();
    }
    try (var w = Files.walk(dir.toPath())) {
      w.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    }
  }
}
