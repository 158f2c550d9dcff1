package io.eyrie.multicast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.internal.Wire;
import io.eyrie.multicast.internal.transport.RatisSupport;
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
      Codec codec = new Codec(CodecRegistry.empty());
      RaftProperties p = new RaftProperties();
      RaftConfigKeys.Rpc.setType(p, SupportedRpcType.NETTY);
      // Long enough that a follower that never answers fails the test rather than being retried.
      RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(60, TimeUnit.SECONDS));
      // Right after the leaders are placed (a transfer may follow the election) a follower may not
      // know the leader yet, and then answers a read with "leader is unknown" (an answer, not the
      // hang this test is about): wait until a follower names the current leader.
      int[] roles = new int[2];
      try (RaftClient probe = client(p, c, g, 0)) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        do {
          assertTrue(System.nanoTime() < deadline, "no follower named the leader within 30 s");
          if (roles[0] != 0) {
            Thread.sleep(50);
          }
          roles[0] = c.leaderOf(g);
          roles[1] = c.cluster().group(g).members().stream().filter(n -> n != roles[0]).findFirst().orElseThrow();
        } while (!namesLeader(directRead(probe, codec, g, roles[1]), roles[0]));
      }
      int leader = roles[0];
      int follower = roles[1];
      assertNotEquals(leader, follower);
      try (RaftClient client = client(p, c, g, follower)) {
        for (int i = 0; i < 3; i++) {
          RaftClientReply r = client.async()
              .sendReadOnly(Message.valueOf(UnsafeByteOperations.unsafeWrap(codec.encode(new Wire.GroupQuery(g)))))
              .get(20, TimeUnit.SECONDS);
          assertTrue(r.isSuccess(), () -> "read failed: " + r.getException());
          assertEquals(2, codec.decode(r.getMessage().getContent().toByteArray()), "the group knows itself as open");
        }
        // The direct form (no redirection): the follower refuses at once and names the leader.
        Object outcome = directRead(client, codec, g, follower);
        NotLeaderException nle = notLeader(outcome);
        assertNotNull(nle, () -> "expected not-leader, got " + outcome);
        assertEquals(RatisSupport.peerId(leader), nle.getSuggestedLeader().getId());
      }
    }
  }

  /** A Ratis client of the group whose first guess of the leader is {@code first} (0: none). */
  private static RaftClient client(RaftProperties p, EmbeddedCluster c, GroupId g, int first) {
    RaftClient.Builder b = RaftClient.newBuilder().setProperties(p)
        .setRaftGroup(RatisSupport.raftGroup(c.cluster(), g))
        .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(10, TimeDuration.valueOf(100, TimeUnit.MILLISECONDS)));
    if (first != 0) {
      b.setLeaderId(RatisSupport.peerId(first));
    }
    return b.build();
  }

  /** A read sent to the follower itself, without redirection: its reply or its failure. */
  private static Object directRead(RaftClient client, Codec codec, GroupId g, int follower) throws Exception {
    return client.async()
        .sendReadOnly(Message.valueOf(UnsafeByteOperations.unsafeWrap(codec.encode(new Wire.GroupQuery(g)))),
            RatisSupport.peerId(follower))
        .handle((r, e) -> e != null ? e : r)
        .get(20, TimeUnit.SECONDS);
  }

  private static NotLeaderException notLeader(Object outcome) {
    return outcome instanceof RaftClientReply r ? r.getNotLeaderException() : find((Throwable) outcome);
  }

  private static boolean namesLeader(Object outcome, int leader) {
    NotLeaderException nle = notLeader(outcome);
    return nle != null && nle.getSuggestedLeader() != null
        && RatisSupport.peerId(leader).equals(nle.getSuggestedLeader().getId());
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
