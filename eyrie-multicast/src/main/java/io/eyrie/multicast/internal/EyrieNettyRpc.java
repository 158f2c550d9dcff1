package io.eyrie.multicast.internal;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Collection;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.ratis.client.ClientFactory;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.netty.NettyFactory;
import org.apache.ratis.proto.RaftProtos.AppendEntriesReplyProto;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotReplyProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotRequestProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteReplyProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteRequestProto;
import org.apache.ratis.proto.RaftProtos.StartLeaderElectionReplyProto;
import org.apache.ratis.proto.RaftProtos.StartLeaderElectionRequestProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.rpc.RpcFactory;
import org.apache.ratis.rpc.RpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerRpc;
import org.apache.ratis.server.ServerFactory;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

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
    return new Factory(new NettyFactory(parameters), this);
  }

  private static final class Factory implements ServerFactory, ClientFactory {
    private final NettyFactory netty;
    private final RpcType type;

    Factory(NettyFactory netty, RpcType type) {
      this.netty = netty;
      this.type = type;
    }

    @Override
    public RpcType getRpcType() {
      return type;
    }

    @Override
    public RaftServerRpc newRaftServerRpc(RaftServer server) {
      return new SerializedRpc(netty.newRaftServerRpc(server), type);
    }

    @Override
    public RaftClientRpc newRaftClientRpc(ClientId clientId, RaftProperties properties) {
      return netty.newRaftClientRpc(clientId, properties);
    }
  }

  private static final class SerializedRpc implements RaftServerRpc {
    private final RaftServerRpc netty;
    private final RpcType type;
    private final ConcurrentHashMap<ByteString, Object> perPeer = new ConcurrentHashMap<>();

    SerializedRpc(RaftServerRpc netty, RpcType type) {
      this.netty = netty;
      this.type = type;
    }

    private Object lock(ByteString peer) {
      return perPeer.computeIfAbsent(peer, k -> new Object());
    }

    @Override
    public RequestVoteReplyProto requestVote(RequestVoteRequestProto r) throws IOException {
      synchronized (lock(r.getServerRequest().getReplyId())) {
        return netty.requestVote(r);
      }
    }

    @Override
    public StartLeaderElectionReplyProto startLeaderElection(StartLeaderElectionRequestProto r) throws IOException {
      synchronized (lock(r.getServerRequest().getReplyId())) {
        return netty.startLeaderElection(r);
      }
    }

    @Override
    public InstallSnapshotReplyProto installSnapshot(InstallSnapshotRequestProto r) throws IOException {
      synchronized (lock(r.getServerRequest().getReplyId())) {
        return netty.installSnapshot(r);
      }
    }

    @Override
    public AppendEntriesReplyProto appendEntries(AppendEntriesRequestProto r) throws IOException {
      return netty.appendEntries(r);
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
      netty.close();
    }
  }
}
