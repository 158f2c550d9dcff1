package io.eyrie.multicast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.internal.RatisSupport;
import io.eyrie.multicast.internal.Wire;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A linearizable read that reaches a follower is answered. Ratis's follower asks the leader for
 * a read index through the server RPC's asynchronous protocol, which Ratis's Netty RPC lacks: the
 * follower threw inside Netty's handler and never answered, so a node's query to a group whose
 * Ratis client still pointed at a follower (after a leader moved, or a new client's first guess)
 * waited for the request timeout, 3 s, and often again. It made a fault-free jepsen run serve 54
 * ops in 6 s instead of about 2,000. Now the follower answers "not the leader", naming the leader,
 * and the client reads there.
 */
@Timeout(120)
class FollowerReadTest {

  @Test
  void aReadSentToAFollowerIsAnsweredThroughTheLeader() throws Exception {
    try (EmbeddedCluster c = EmbeddedCluster.newBuilder().nodes(3).partitions(1)
        .deliverers(new EchoDeliverers()).start()) {
      c.awaitLeaders(Duration.ofSeconds(60));
      GroupId g = c.cluster().partitions().get(0);
      int leader = c.leaderOf(g);
      int follower = c.cluster().group(g).members().stream().filter(n -> n != leader).findFirst().orElseThrow();
      assertNotEquals(leader, follower);
      Codec codec = new Codec(CodecRegistry.create());
      RaftProperties p = new RaftProperties();
      RaftConfigKeys.Rpc.setType(p, SupportedRpcType.NETTY);
      // Long enough that a follower that never answers fails the test rather than being retried.
      RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(60, TimeUnit.SECONDS));
      try (RaftClient client = RaftClient.newBuilder().setProperties(p)
          .setRaftGroup(RatisSupport.raftGroup(c.cluster(), g))
          .setLeaderId(RatisSupport.peerId(follower))
          .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(10, TimeDuration.valueOf(100, TimeUnit.MILLISECONDS)))
          .build()) {
        for (int i = 0; i < 3; i++) {
          RaftClientReply r = client.async()
              .sendReadOnly(Message.valueOf(UnsafeByteOperations.unsafeWrap(codec.encode(new Wire.GroupQuery(g)))))
              .get(20, TimeUnit.SECONDS);
          assertTrue(r.isSuccess(), () -> "read failed: " + r.getException());
          assertEquals(2, codec.decode(r.getMessage().getContent().toByteArray()), "the group knows itself as open");
        }
        // The direct form (no redirection): the follower refuses at once and names the leader.
        java.util.concurrent.CompletableFuture<Object> direct = client.async()
            .sendReadOnly(Message.valueOf(UnsafeByteOperations.unsafeWrap(codec.encode(new Wire.GroupQuery(g)))),
                RatisSupport.peerId(follower))
            .handle((r, e) -> e != null ? e : r);
        Object outcome = direct.get(20, TimeUnit.SECONDS);
        NotLeaderException nle = outcome instanceof RaftClientReply r ? r.getNotLeaderException() : find((Throwable) outcome);
        assertNotNull(nle, () -> "expected not-leader, got " + outcome);
        assertEquals(RatisSupport.peerId(leader), nle.getSuggestedLeader().getId());
      }
    }
  }

  private static NotLeaderException find(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof NotLeaderException n) {
        return n;
      }
    }
    return null;
  }
}
