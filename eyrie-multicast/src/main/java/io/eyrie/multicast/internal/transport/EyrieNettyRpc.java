package io.eyrie.multicast.internal.transport;

import io.eyrie.multicast.TlsConfig;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.util.Collection;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import org.apache.ratis.client.ClientFactory;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.netty.NettyFactory;
import org.apache.ratis.proto.RaftProtos.AppendEntriesReplyProto;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotReplyProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotRequestProto;
import org.apache.ratis.proto.RaftProtos.RaftRpcRequestProto;
import org.apache.ratis.proto.RaftProtos.ReadIndexReplyProto;
import org.apache.ratis.proto.RaftProtos.ReadIndexRequestProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteReplyProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteRequestProto;
import org.apache.ratis.proto.RaftProtos.StartLeaderElectionReplyProto;
import org.apache.ratis.proto.RaftProtos.StartLeaderElectionRequestProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.rpc.RpcFactory;
import org.apache.ratis.rpc.RpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerRpc;
import org.apache.ratis.server.ServerFactory;
import org.apache.ratis.server.protocol.RaftServerAsynchronousProtocol;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.ProtoUtils;

/**
 * Ratis's Netty RPC, made safe for many groups per server.
 *
 * <p>Ratis's Netty server RPC keeps one connection per peer, shared by every group of the
 * server, and matches replies to requests by call id; vote, leader-election and snapshot
 * requests all carry call id 0. When two groups of one server send such requests to the same
 * peer at once, the second replaces the first's pending reply and both fail: elections retry,
 * but concurrent snapshot installations livelock. This RPC type delegates to Ratis's Netty RPC
 * and lets only one of those requests per peer be in flight (log appends, which carry unique
 * call ids, are not serialized).
 *
 * <p>A request stays in flight until Ratis's proxy is done with it, not merely until its caller
 * stops waiting: a caller that is interrupted (Ratis interrupts the vote requests still open when
 * an election ends) leaves the reply slot of call id 0 taken in Ratis 3.3.0's proxy, which then
 * refuses every later call-id-0 request to that peer ({@code NettyRpcProxy.Connection.offer}
 * asserts the slot is free) until a reply or a reconnection frees it. So each peer's requests run
 * on one thread of their own, and an interrupted caller leaves its request to finish there
 * (answered, or timed out, on which Ratis reconnects).
 */
public final class EyrieNettyRpc implements RpcType {

  /** Creates the RPC type (Ratis instantiates it by class name). */
  public EyrieNettyRpc() {}

  @Override
  public String name() {
    return EyrieNettyRpc.class.getName();
  }

  @Override
  public RpcFactory newFactory(Parameters parameters) {
    return new Factory(new NettyFactory(parameters), this, RaftTls.of(parameters),
        parameters == null ? 0 : RaftTls.handshakeTimeoutMs(parameters), RaftFrameLimit.of(parameters),
        RaftPortCounters.of(parameters));
  }

  /** Ratis's Netty factory, with TLS ({@link RaftTls}) when the parameters carry a node's. */
  private record Factory(NettyFactory netty, RpcType type, TlsConfig tls, int handshakeTimeoutMs, long frameLimit,
      RaftPortCounters counters)
      implements ServerFactory, ClientFactory {
    @Override
    public RpcType getRpcType() {
      return type;
    }

    @Override
    public RaftServerRpc newRaftServerRpc(RaftServer server) {
      RaftServerRpc rpc = netty.newRaftServerRpc(server);
      RaftTls.guardAccepts(rpc, frameLimit, tls, handshakeTimeoutMs, counters);
      if (tls == null) {
        return new SerializedRpc(rpc, type, server, () -> { });
      }
      // The proxies to peers need the server's id, which Ratis sets after making the RPC.
      return new SerializedRpc(rpc, type, server,
          () -> RaftTls.secureDials(rpc, server.getProperties(), tls, handshakeTimeoutMs));
    }

    @Override
    public RaftClientRpc newRaftClientRpc(ClientId clientId, RaftProperties properties) {
      RaftClientRpc rpc = netty.newRaftClientRpc(clientId, properties);
      if (tls != null) {
        RaftTls.secureDials(rpc, properties, tls, handshakeTimeoutMs);
      }
      return rpc;
    }
  }

  private static final class SerializedRpc implements RaftServerRpc {
    private final RaftServerRpc netty;
    private final RpcType type;
    private final RaftServer server;
    private final Runnable beforeStart;
    private final ConcurrentHashMap<ByteString, ExecutorService> perPeer = new ConcurrentHashMap<>();
    private volatile boolean closed;

    SerializedRpc(RaftServerRpc netty, RpcType type, RaftServer server, Runnable beforeStart) {
      this.netty = netty;
      this.type = type;
      this.server = server;
      this.beforeStart = beforeStart;
    }

    /** Runs a call-id-0 request on the peer's thread, after that peer's earlier ones. */
    private <T> T serialized(ByteString peer, Callable<T> call) throws IOException {
      Future<T> f;
      try {
        if (closed) {
          throw new RejectedExecutionException("closed");
        }
        ExecutorService peerThread = perPeer.computeIfAbsent(peer, k -> Executors.newSingleThreadExecutor(r -> {
          Thread t = new Thread(r, "eyrie-rpc-" + k.toStringUtf8());
          t.setDaemon(true);
          return t;
        }));
        f = peerThread.submit(call);
        if (closed) {
          peerThread.shutdownNow(); // created while closing
        }
      } catch (RejectedExecutionException e) {
        throw new IOException("the server RPC is closed", e);
      }
      try {
        return f.get();
      } catch (InterruptedException e) {
        // Not started: it is never sent. Started: it keeps the peer's thread until Ratis's
        // proxy has its reply or gives up on it, so the next request finds the slot free.
        f.cancel(false);
        Thread.currentThread().interrupt();
        InterruptedIOException ie = new InterruptedIOException("interrupted while waiting for a reply");
        ie.initCause(e);
        throw ie;
      } catch (ExecutionException e) {
        Throwable c = e.getCause();
        if (c instanceof IOException io) {
          throw io;
        }
        if (c instanceof RuntimeException re) {
          throw re;
        }
        if (c instanceof Error err) {
          throw err;
        }
        throw new IOException(c);
      }
    }

    @Override
    public RequestVoteReplyProto requestVote(RequestVoteRequestProto r) throws IOException {
      return serialized(r.getServerRequest().getReplyId(), () -> netty.requestVote(r));
    }

    @Override
    public StartLeaderElectionReplyProto startLeaderElection(StartLeaderElectionRequestProto r) throws IOException {
      return serialized(r.getServerRequest().getReplyId(), () -> netty.startLeaderElection(r));
    }

    @Override
    public InstallSnapshotReplyProto installSnapshot(InstallSnapshotRequestProto r) throws IOException {
      return serialized(r.getServerRequest().getReplyId(), () -> netty.installSnapshot(r));
    }

    @Override
    public AppendEntriesReplyProto appendEntries(AppendEntriesRequestProto r) throws IOException {
      return netty.appendEntries(r);
    }

    /**
     * Ratis's Netty RPC has no asynchronous server protocol, which a follower needs for a
     * linearizable read: it asks the leader for a read index through it. Without this, the
     * follower's server threw from inside Netty's handler and never answered, and the client
     * waited for its request timeout (3 s by default) before trying again, often at the same
     * follower. Here a follower answers such a read at once with "not the leader" and the
     * leader's address, as it answers writes, so the client goes to the leader.
     */
    @Override
    public RaftServerAsynchronousProtocol async() {
      return followerAsync;
    }

    private final RaftServerAsynchronousProtocol followerAsync = new RaftServerAsynchronousProtocol() {
      @Override
      public CompletableFuture<AppendEntriesReplyProto> appendEntriesAsync(AppendEntriesRequestProto r) {
        return CompletableFuture.failedFuture(new UnsupportedOperationException(
            "asynchronous appendEntries over " + type.name()));
      }

      @Override
      public CompletableFuture<ReadIndexReplyProto> readIndexAsync(ReadIndexRequestProto r) {
        return CompletableFuture.failedFuture(notLeader(r.getServerRequest()));
      }
    };

    private IOException notLeader(RaftRpcRequestProto request) {
      RaftGroupId groupId = ProtoUtils.toRaftGroupId(request.getRaftGroupId());
      try {
        RaftGroup group = server.getDivision(groupId).getGroup();
        RaftPeer leader = group.getPeer(RaftPeerId.valueOf(request.getReplyId()));
        return new NotLeaderException(RaftGroupMemberId.valueOf(RaftPeerId.valueOf(request.getRequestorId()), groupId),
            leader, group.getPeers());
      } catch (IOException e) {
        return e;
      }
    }

    @Override
    public void handleException(RaftPeerId serverId, Exception e, boolean reconnect) {
      netty.handleException(serverId, e, reconnect);
    }

    @Override
    public void notifyNotLeader(RaftGroupId groupId) {
      netty.notifyNotLeader(groupId);
    }

    @Override
    public void addRaftPeers(Collection<RaftPeer> peers) {
      netty.addRaftPeers(peers);
    }

    @Override
    public void start() throws IOException {
      beforeStart.run();
      netty.start();
    }

    @Override
    public InetSocketAddress getInetSocketAddress() {
      return netty.getInetSocketAddress();
    }

    @Override
    public RpcType getRpcType() {
      return type;
    }

    @Override
    public void close() throws IOException {
      closed = true;
      perPeer.values().forEach(ExecutorService::shutdownNow);
      netty.close();
    }
  }
}
