package io.eyrie.multicast.internal.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.testing.Waits;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.netty.NettyConfigKeys;
import org.apache.ratis.proto.RaftProtos.RaftGroupIdProto;
import org.apache.ratis.proto.RaftProtos.RaftRpcReplyProto;
import org.apache.ratis.proto.RaftProtos.RaftRpcRequestProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteReplyProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteRequestProto;
import org.apache.ratis.proto.netty.NettyProtos.RaftNettyServerReplyProto;
import org.apache.ratis.proto.netty.NettyProtos.RaftNettyServerRequestProto;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.RaftServerRpc;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Requests with call id 0 (votes, leader elections, snapshots) over Ratis's Netty RPC, to a peer
 * that answers all but the first. Ratis's proxy keeps the reply slot of a request whose caller
 * was interrupted (an election that ended stops its vote requests that way), and then refuses
 * every later call-id-0 request to that peer until the connection closes.
 */
@Timeout(60)
class EyrieNettyRpcTest {
  private static final RaftPeerId SELF = RaftPeerId.valueOf("s1");
  private static final RaftPeerId PEER = RaftPeerId.valueOf("s2");

  @TempDir
  Path dir;

  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private final AtomicInteger requests = new AtomicInteger();
  private ServerSocket peer;
  private RaftServer server;

  @AfterEach
  void close() throws IOException {
    if (server != null) {
      server.close();
    }
    if (peer != null) {
      peer.close();
    }
    for (Socket s : sockets) {
      s.close();
    }
  }

  /** A fake peer: reads Netty-framed requests and answers every vote request but the first. */
  private void startPeer() throws IOException {
    peer = new ServerSocket(0);
    Thread acceptor = new Thread(() -> {
      while (!peer.isClosed()) {
        try {
          Socket s = peer.accept();
          sockets.add(s);
          Thread conn = new Thread(() -> serve(s), "fake-peer-conn");
          conn.setDaemon(true);
          conn.start();
        } catch (IOException e) {
          return;
        }
      }
    }, "fake-peer");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  private void serve(Socket s) {
    try (InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
      while (true) {
        RaftNettyServerRequestProto req = RaftNettyServerRequestProto.parseDelimitedFrom(in);
        if (req == null) {
          return;
        }
        if (requests.getAndIncrement() == 0 || !req.hasRequestVoteRequest()) {
          continue; // the first request is never answered (a peer that hangs, or a lost reply)
        }
        RaftRpcRequestProto r = req.getRequestVoteRequest().getServerRequest();
        RequestVoteReplyProto vote = RequestVoteReplyProto.newBuilder()
            .setServerReply(RaftRpcReplyProto.newBuilder()
                .setRequestorId(r.getRequestorId())
                .setReplyId(r.getReplyId())
                .setRaftGroupId(r.getRaftGroupId())
                .setCallId(r.getCallId())
                .setSuccess(true))
            .setTerm(req.getRequestVoteRequest().getCandidateTerm())
            .build();
        RaftNettyServerReplyProto.newBuilder().setRequestVoteReply(vote).build().writeDelimitedTo(out);
        out.flush();
      }
    } catch (IOException e) {
      // the test closed the connection
    }
  }

  private RaftServerRpc rpc() throws IOException {
    RaftProperties p = new RaftProperties();
    RaftConfigKeys.Rpc.setType(p, new EyrieNettyRpc());
    try (ServerSocket free = new ServerSocket(0)) {
      NettyConfigKeys.Server.setPort(p, free.getLocalPort());
    }
    RaftServerConfigKeys.setStorageDir(p, List.of(Files.createDirectories(dir.resolve("s1")).toFile()));
    // How long Ratis's proxy waits for a reply (plus the request's own timeout).
    RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(1, TimeUnit.SECONDS));
    server = RaftServer.newBuilder().setServerId(SELF).setProperties(p)
        .setStateMachineRegistry(g -> new BaseStateMachine()).build();
    RaftServerRpc rpc = server.getServerRpc();
    rpc.addRaftPeers(List.of(RaftPeer.newBuilder().setId(PEER).setAddress("127.0.0.1:" + peer.getLocalPort()).build()));
    return rpc;
  }

  private static RequestVoteRequestProto vote(long term) {
    return RequestVoteRequestProto.newBuilder()
        .setServerRequest(RaftRpcRequestProto.newBuilder()
            .setRequestorId(SELF.toByteString())
            .setReplyId(PEER.toByteString())
            .setRaftGroupId(RaftGroupIdProto.newBuilder().setId(RaftGroupId.randomId().toByteString()))
            .setCallId(0))
        .setCandidateTerm(term)
        .build();
  }

  @Test
  void anInterruptedVoteRequestDoesNotBlockTheNextOnes() throws Exception {
    startPeer();
    RaftServerRpc rpc = rpc();
    CompletableFuture<Throwable> first = new CompletableFuture<>();
    Thread candidate = new Thread(() -> {
      try {
        rpc.requestVote(vote(1));
        first.complete(null);
      } catch (Throwable t) {
        first.complete(t);
      }
    }, "candidate");
    candidate.start();
    Waits.until(Duration.ofSeconds(20), () -> requests.get() > 0, () -> "the peer got the first vote request");
    // The election ended (it won, or its time ran out): Ratis interrupts the vote requests left.
    candidate.interrupt();
    assertInstanceOf(InterruptedIOException.class, first.get(10, TimeUnit.SECONDS));

    // A later election, of this group or another group of the server, asks the same peer.
    for (long term = 2; term <= 3; term++) {
      long t = term;
      CompletableFuture<RequestVoteReplyProto> next = CompletableFuture.supplyAsync(() -> {
        try {
          return rpc.requestVote(vote(t));
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      });
      RequestVoteReplyProto reply;
      try {
        reply = next.get(20, TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        throw new AssertionError("vote request at term " + t + " failed: " + e.getCause(), e.getCause());
      }
      assertTrue(reply.getServerReply().getSuccess());
      assertEquals(t, reply.getTerm());
    }
  }
}
