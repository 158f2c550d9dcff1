package io.eyrie.multicast.testing;

import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MulticastClient;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assertions;

/**
 * The group names the tests share (the oracle and partitions p0 to p3), and the one-node cluster
 * that deterministic tests of a single group's logic describe their groups with (nothing runs on
 * it).
 */
public final class TestGroups {
  public static final GroupId ORACLE = GroupId.valueOf("oracle");
  public static final GroupId P0 = GroupId.valueOf("p0");
  public static final GroupId P1 = GroupId.valueOf("p1");
  public static final GroupId P2 = GroupId.valueOf("p2");
  public static final GroupId P3 = GroupId.valueOf("p3");

  private TestGroups() {}

  /**
   * Returns a cluster of one node (ports 1 and 2, never opened) with an oracle group and the
   * given number of partitions p0, p1, ..., each of one replica.
   */
  public static ClusterConfig oneNode(int partitions) {
    StringBuilder file = new StringBuilder("node 1 127.0.0.1 raft=1 client=2\ngroup oracle oracle 1\n");
    for (int p = 0; p < partitions; p++) {
      file.append("group p").append(p).append(" partition 1\n");
    }
    return ClusterConfig.parse(file.toString());
  }

  /**
   * Sends {@code rounds} multicasts of distinct strings to each destination set in turn, through
   * an echo service ({@code EchoDeliverers}), and asserts each reply is its own string, within
   * {@code wait}.
   */
  @SafeVarargs
  public static void echoed(MulticastClient client, String tag, int rounds, Duration wait, Set<GroupId>... dests)
      throws Exception {
    for (int i = 0; i < rounds; i++) {
      for (int d = 0; d < dests.length; d++) {
        String sent = tag + "-" + d + "-" + i;
        Assertions.assertEquals(sent, client.multicast(dests[d], sent).get(wait.toMillis(), TimeUnit.MILLISECONDS),
            "to " + dests[d]);
      }
    }
  }

  /**
   * Kills the node that leads {@code g} (waiting for a leader first) and waits until another node
   * leads it; returns the killed node.
   */
  public static int killLeaderAndAwaitAnother(EmbeddedCluster cluster, GroupId g, Duration wait) {
    Waits.until(wait, () -> cluster.leaderOf(g) != 0, () -> "a leader of " + g);
    int victim = cluster.leaderOf(g);
    cluster.kill(victim);
    Waits.until(wait, () -> cluster.leaderOf(g) != 0 && cluster.leaderOf(g) != victim,
        () -> "a new leader of " + g + " after node " + victim + " was killed");
    return victim;
  }
}
