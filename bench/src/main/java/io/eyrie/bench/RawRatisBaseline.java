package io.eyrie.bench;

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
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.netty.NettyConfigKeys;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.util.TimeDuration;

/**
 * The limit for one group on this machine: one Ratis group of 3 servers on loopback (Netty
 * RPC, on-disk log) whose state machine does nothing, driven by async clients, one Ratis request
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

  /** Starts the group (3 servers on loopback, on-disk logs in a temporary directory). */
  public RawRatisBaseline() throws IOException {
    SHADED_NETTY_LOG.setLevel(java.util.logging.Level.WARNING);
    dir = Files.createTempDirectory("eyrie-raw-ratis-").toFile();
    List<RaftPeer> peers = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      int port;
      try (ServerSocket s = new ServerSocket(0)) {
        port = s.getLocalPort();
      }
      peers.add(RaftPeer.newBuilder().setId("raw" + i).setAddress("127.0.0.1:" + port).build());
    }
    group = RaftGroup.valueOf(RaftGroupId.valueOf(UUID.randomUUID()), peers);
    for (RaftPeer p : peers) {
      RaftProperties props = new RaftProperties();
      RaftConfigKeys.Rpc.setType(props, SupportedRpcType.NETTY);
      NettyConfigKeys.Server.setPort(props, Integer.parseInt(p.getAddress().split(":")[1]));
      RaftServerConfigKeys.setStorageDir(props, List.of(new File(dir, p.getId().toString())));
      RaftServerConfigKeys.Rpc.setTimeoutMin(props, TimeDuration.valueOf(1000, TimeUnit.MILLISECONDS));
      RaftServerConfigKeys.Rpc.setTimeoutMax(props, TimeDuration.valueOf(2000, TimeUnit.MILLISECONDS));
      RaftServer s = RaftServer.newBuilder().setServerId(RaftPeerId.valueOf(p.getId().toString()))
          .setGroup(group).setProperties(props).setStateMachine(new NoopStateMachine()).build();
      s.start();
      servers.add(s);
    }
  }

  /** A client of the group. */
  public RaftClient newClient() {
    RaftProperties props = new RaftProperties();
    RaftConfigKeys.Rpc.setType(props, SupportedRpcType.NETTY);
    return RaftClient.newBuilder().setProperties(props).setRaftGroup(group).build();
  }

  @Override
  public void close() throws IOException {
    for (RaftServer s : servers) {
      s.close();
    }
    try (var w = Files.walk(dir.toPath())) {
      w.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    }
  }
}
