package io.eyrie.multicast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.eyrie.multicast.internal.transport.RatisSupport;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Group leaders spread over the nodes (Ratis priorities rotated by group), and leadership goes
 * back to a group's preferred node after it failed and recovered, so that one node's threads do
 * not carry every group.
 */
@Timeout(180)
class LeaderPlacementTest {

  @Test
  void eachGroupHasOnePreferredMemberAndTheyRotateOverTheNodes() {
    ClusterConfig.Builder b = ClusterConfig.newBuilder();
    for (int n = 1; n <= 3; n++) {
      b.node(n, "127.0.0.1", 20000 + n, 21000 + n);
    }
    b.group(GroupId.valueOf("oracle"), ClusterConfig.Kind.ORACLE, java.util.List.of(1, 2, 3));
    for (int p = 0; p < 4; p++) {
      b.group(GroupId.valueOf("p" + p), ClusterConfig.Kind.PARTITION, java.util.List.of(1, 2, 3));
    }
    ClusterConfig cluster = b.build();
    TreeSet<Integer> preferred = new TreeSet<>();
    for (GroupId g : cluster.groupIds()) {
      int p = RatisSupport.preferredLeader(cluster, g);
      assertTrue(cluster.group(g).members().contains(p), g + " prefers one of its members");
      preferred.add(p);
    }
    assertEquals(cluster.nodes().keySet(), preferred, "every node is preferred by some group");
  }

  @Test
  void leadersSettleOnTheirPreferredNodesAndReturnAfterAFailover() {
    try (EmbeddedCluster c = settledCluster()) {
      int victim = killPreferredLeaderOfFirstPartition(c);
      c.restart(victim);
      awaitPreferred(c, Duration.ofSeconds(60));
    }
  }

  @Test
  void aPreferredNodeThatWasDownGetsItsGroupsBackOnlyAfterKeepingUpForAWhile() {
    try (EmbeddedCluster c = settledCluster()) {
      int victim = killPreferredLeaderOfFirstPartition(c);
      // Down long enough for the new leader to take it for absent, not just slow (the absence
      // itself is what is set up here, so this waits for time to pass).
      long absentUntil = System.nanoTime() + (LeaderBalancer.ABSENT_SILENCE_MS + 1000) * 1_000_000L;
      while (System.nanoTime() < absentUntil) {
        LockSupport.parkNanos(50_000_000L);
      }
      long restarted = System.nanoTime();
      c.restart(victim);
      awaitPreferred(c, Duration.ofSeconds(60));
      long backAfterMs = (System.nanoTime() - restarted) / 1_000_000L;
      assertTrue(backAfterMs >= LeaderBalancer.HAND_BACK_SETTLE_NANOS / 1_000_000L,
          "the leadership went back " + backAfterMs + " ms after the restart, before the node kept up for the settle time");
    }
  }

  /** Starts 3 nodes and 3 partitions with short election timeouts; returns once every leader is preferred. */
  private static EmbeddedCluster settledCluster() {
    EmbeddedCluster c = EmbeddedCluster.newBuilder().nodes(3).partitions(3)
        .options(NodeOptions.newBuilder().electionTimeoutMs(500, 1000).build())
        .deliverers(new EchoDeliverers()).start();
    c.awaitLeaders(Duration.ofSeconds(60));
    awaitPreferred(c, Duration.ofSeconds(60));
    return c;
  }

  /** Kills the preferred leader of the first partition and waits for another leader; returns the killed node. */
  private static int killPreferredLeaderOfFirstPartition(EmbeddedCluster c) {
    GroupId g = c.cluster().partitions().get(0);
    int victim = RatisSupport.preferredLeader(c.cluster(), g);
    c.kill(victim);
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (c.leaderOf(g) == 0 && System.nanoTime() < deadline) {
      LockSupport.parkNanos(20_000_000L);
    }
    assertNotEquals(0, c.leaderOf(g), "a new leader while the preferred node is down");
    return victim;
  }

  /** Waits until every group is led by its preferred node; fails with the placement otherwise. */
  private static void awaitPreferred(EmbeddedCluster c, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    Map<GroupId, Integer> want = new TreeMap<>();
    for (GroupId g : c.cluster().groupIds()) {
      want.put(g, RatisSupport.preferredLeader(c.cluster(), g));
    }
    while (true) {
      Map<GroupId, Integer> have = new TreeMap<>();
      for (GroupId g : c.cluster().groupIds()) {
        have.put(g, c.leaderOf(g));
      }
      if (have.equals(want)) {
        return;
      }
      if (System.nanoTime() > deadline) {
        assertEquals(want, have, "leaders on their preferred nodes");
      }
      LockSupport.parkNanos(50_000_000L);
    }
  }
}
