package io.eyrie.it;

import static io.eyrie.it.DssmrFixture.INITIAL;
import static io.eyrie.it.DssmrFixture.ORACLE;
import static io.eyrie.it.DssmrFixture.P0;
import static io.eyrie.it.DssmrFixture.P1;
import static io.eyrie.it.DssmrFixture.P2;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.PartitionTable;
import io.eyrie.core.Reply;
import io.eyrie.examples.bank.BankOps;
import io.eyrie.examples.bank.BankService;
import io.eyrie.multicast.ClusterAdmin;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MulticastClient;
import io.eyrie.multicast.Node;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.multicast.testing.Waits;
import io.eyrie.oracle.OracleStateMachine;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Review N1: a node restarted after it learned an added partition replays its oracle replica's
 * log from the start (no snapshot yet) from the same initial state as every other replica, the
 * cluster file's partitions, so it decides the S-SMR create placed before the addition as its
 * peers did. Before the fix its replica started with the added partition active and empty, placed
 * that create there (a partition the create was not sent to: verdict RETRY), and its map lacked
 * the acknowledged object.
 */
@Timeout(240)
class RestartedReplicaInitialStateTest {

  static EmbeddedCluster cluster() {
    // snapshotOnStop off: a node closed by kill() restarts as a killed one does, replaying its
    // logs (no automatic snapshot is reached here: the threshold is 20,000 entries).
    return EmbeddedCluster.newBuilder().nodes(3).partitions(2).oracle(true)
        .options(NodeOptions.newBuilder().electionTimeoutMs(600, 1200).snapshotOnStop(false).build())
        .app(BankService.with(ReadableOracle::new)).start();
  }

  /** The bank's oracle, with the location of an object in this replica's map readable by the test. */
  static final class ReadableOracle extends OracleStateMachine {
    GroupId located(ObjId id) {
      return locationOf(id);
    }
  }

  /** What a test checks after the schedule: the cluster, the DS-SMR client and where v was placed. */
  interface AfterRestart {
    void check(EmbeddedCluster c, Client cl, GroupId at) throws Exception;
  }

  /**
   * Runs the review's schedule ({@link #createAddAndRestart}) for {@code v} on a new cluster with
   * a DS-SMR client (retry threshold 3), an S-SMR client and an admin client, then {@code then}.
   */
  static void afterRestart(ObjId v, AfterRestart then) throws Exception {
    try (EmbeddedCluster c = cluster();
        Client cl = DssmrFixture.client(c, Client.Mode.DSSMR, 3);
        Client ssmr = DssmrFixture.client(c, Client.Mode.SSMR, 0);
        MulticastClient admin = c.newClient()) {
      then.check(c, cl, createAddAndRestart(c, cl, ssmr, admin, v));
    }
  }

  /**
   * The review's schedule up to the restart: accounts in p0 and p1, an acknowledged S-SMR create
   * of {@code v}, p2 added to the cluster and the oracle's table, node 3 restarted without a
   * snapshot. Returns where the oracle placed {@code v}.
   */
  static GroupId createAddAndRestart(EmbeddedCluster c, Client cl, Client ssmr, MulticastClient admin, ObjId v)
      throws Exception {
    // p0 and p1 hold accounts, so an added, empty p2 would be the least loaded partition.
    for (int i = 0; i < 4; i++) {
      assertTrue(cl.sendCreate(Command.create(ObjId.valueOf(i), INITIAL)).get(60, TimeUnit.SECONDS).isOk());
    }
    // An S-SMR create (to the oracle, p0 and p1), placed in the least loaded active partition.
    Reply created = ssmr.sendCreate(Command.create(v, INITIAL)).get(60, TimeUnit.SECONDS);
    assertTrue(created.isOk(), "S-SMR create: " + created);
    GroupId at = cl.locationOf(v).get(30, TimeUnit.SECONDS);
    assertTrue(P0.equals(at) || P1.equals(at), "placed in p0 or p1: " + at);

    // Add p2 to the cluster and to the oracle's table: every node records it.
    ClusterAdmin.addGroup(admin, P2, List.of(1, 2, 3), Duration.ofSeconds(60));
    PartitionTable t = cl.addPartition(P2).get(60, TimeUnit.SECONDS);
    assertEquals(List.of(P0, P1, P2), t.active());
    assertEquals(0, c.node(3).stats(ORACLE).snapshotsTaken(), "no oracle snapshot yet");

    // Node 3 stops without a snapshot and restarts: its replicas replay their logs from index 0.
    c.kill(3);
    c.restart(3);
    assertEquals(0, c.node(3).stats(ORACLE).snapshotsLoaded(), "node 3 replays its oracle log from index 0");
    assertTrue(c.node(3).cluster().groups().containsKey(P2), "node 3 remembers p2");
    return at;
  }

  @Test
  void aRestartedNodesOracleReplicaReplaysTheLogFromTheClusterFilesTable() throws Exception {
    ObjId v = ObjId.valueOf(100);
    afterRestart(v, (c, cl, at) -> {
      Node n1 = c.node(1);
      Node n3 = c.node(3);
      // Nothing else runs: once node 3 applied what node 1 did, their oracle states are equal.
      Waits.until(Duration.ofSeconds(90), () -> Arrays.equals(oracleState(n1), oracleState(n3)),
          () -> "node 3's oracle replica replays to node 1's state; node 1 maps " + v + " to "
              + locationAt(n1, v) + ", node 3 to " + locationAt(n3, v) + " (node 3 at "
              + n3.stats(ORACLE).executed() + " executed, node 1 at " + n1.stats(ORACLE).executed() + ")");
      assertEquals(at, locationAt(n3, v), "the restarted replica maps the acknowledged object where its peers do");
      assertArrayEquals(oracleState(c.node(2)), oracleState(n3));
    });
  }

  @Test
  void anAcknowledgedSsmrCreateReadsBackWhileTheRestartedReplicaLeadsTheOracle() throws Exception {
    ObjId v = ObjId.valueOf(100);
    afterRestart(v, (c, cl, at) -> {
      // Node 3 leads the oracle: node 1 (its preferred leader, which the balancing would hand it
      // back to) is stopped, and node 2 hands the leadership over if it got it.
      c.kill(1);
      Waits.until(Duration.ofSeconds(60), () -> {
        int leader = c.leaderOf(ORACLE);
        if (leader == 2) {
          c.node(2).handOffLeadership(Duration.ofSeconds(5));
        }
        return c.leaderOf(ORACLE) == 3;
      }, () -> "node 3 leads the oracle (leader: node " + c.leaderOf(ORACLE) + ")");

      Reply read = cl.sendAccess(Command.access(new BankOps.Read(), List.of(v))).get(60, TimeUnit.SECONDS);
      assertTrue(read.isOk(), "read of the acknowledged S-SMR-created object through node 3's oracle: " + read);
      assertEquals(INITIAL, ((long[]) read.value())[0]);
      Reply again = cl.sendCreate(Command.create(v, INITIAL)).get(60, TimeUnit.SECONDS);
      assertTrue(!again.isOk(), "a second create of it is refused (it exists): " + again);
      assertEquals(3, c.leaderOf(ORACLE), "still led by node 3");
      DssmrFixture.assertAuditClean(cl, 60);
    });
  }

  /** The oracle replica's whole replicated state (map, chains, table), as its snapshot bytes. */
  static byte[] oracleState(Node n) {
    return n.inspect(ORACLE, d -> d.snapshot());
  }

  static GroupId locationAt(Node n, ObjId id) {
    return n.inspect(ORACLE, d -> ((ReadableOracle) d).located(id));
  }
}
