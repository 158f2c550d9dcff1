package io.eyrie.it;

import static io.eyrie.it.DssmrFixture.P0;
import static io.eyrie.it.DssmrFixture.P1;
import static io.eyrie.it.DssmrFixture.P2;
import static io.eyrie.it.DssmrFixture.P3;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Reply;
import io.eyrie.examples.bank.BankOps;
import io.eyrie.examples.bank.BankService;
import io.eyrie.multicast.ClusterAdmin;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MulticastClient;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.multicast.testing.Waits;
import io.eyrie.oracle.OracleStateMachine;
import java.time.Duration;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A group addition that stops halfway (review N3): p2's only other member is down, so p2 cannot
 * elect a leader and its addition times out with p2 known to every group but not open. Meanwhile
 * every group keeps delivering, an S-SMR access of a missing object answers NOT_FOUND (p2 holds
 * nothing and no client can name it), and adding another group, p3, is refused (it would never
 * reach p2, so completing p2 later would leave p2's opening undecided at every group and stop
 * every group's delivery). Once p2's member is back, adding p2 again completes it, p3 can then be
 * added, and every group, the added ones included, keeps delivering.
 *
 * <p>Nodes 1-4; the file's groups have three replicas each (oracle on 1-3, p0 on 2-4, p1 on 3,4,1),
 * so each survives node 4's loss; p2 is on nodes 1 and 4.
 */
@Timeout(300)
class HalfwayGroupAddTest {
  static final long INITIAL = 100;

  @Test
  void aHalfwayAdditionNeitherStallsTheClusterNorBlocksNotFound() throws Exception {
    try (EmbeddedCluster c = EmbeddedCluster.newBuilder().nodes(4).replication(3).partitions(2).oracle(true)
        .options(NodeOptions.newBuilder().electionTimeoutMs(600, 1200).build())
        .app(BankService.with(OracleStateMachine::new)).start();
        Client cl = DssmrFixture.client(c, Client.Mode.DSSMR, 3);
        // Every command through the S-SMR fallback: to the oracle and every partition it knows.
        Client ssmr = DssmrFixture.client(c, Client.Mode.SSMR, 0);
        MulticastClient admin = c.newClient()) {
      long next = 0;
      for (; next < 4; next++) {
        create(cl, next);
      }

      // p2's addition stops halfway: with node 4 down, p2 (nodes 1 and 4) has no leader.
      c.kill(4);
      try {
        ClusterAdmin.addGroup(admin, P2, List.of(1, 4), Duration.ofSeconds(15));
        fail("p2's addition completed with half its members down");
      } catch (TimeoutException expected) {
        // known everywhere, not open
      }
      Waits.until(Duration.ofSeconds(30), () -> c.node(1).groups().contains(P2),
          () -> "node 1 learned p2 and hosts its replica");
      // The client that started it knows p2 but must not take it for open: resuming it times out
      // again rather than answering at once that it is done.
      try {
        ClusterAdmin.addGroup(admin, P2, List.of(1, 4), Duration.ofSeconds(5));
        fail("p2's addition resumed with half its members still down");
      } catch (TimeoutException expected) {
        // still halfway
      }

      // Every group keeps delivering, and the fallback tells a missing object from a halfway group.
      next = traffic(cl, ssmr, next);
      Reply missing = ssmr.sendAccess(Command.access(new BankOps.Read(), ObjId.valueOf(9999)))
          .get(60, TimeUnit.SECONDS);
      assertEquals(Reply.Status.NOT_FOUND, missing.status(), "S-SMR access of a missing object: " + missing);

      // Adding another group now (an operator's new client) is refused (or, if it were accepted,
      // must not stall anything below).
      boolean p3Added;
      try {
        addGroup(c, P3, List.of(1, 2, 3), Duration.ofSeconds(30));
        p3Added = true;
        System.out.println("HalfwayGroupAddTest: p3 was added while p2 was halfway");
      } catch (IllegalStateException refused) {
        System.out.println("HalfwayGroupAddTest: p3 refused while p2 was halfway: " + refused.getMessage());
        assertTrue(refused.getMessage().contains("p2"), "the refusal names the halfway group: " + refused.getMessage());
        p3Added = false;
      }
      next = traffic(cl, ssmr, next);

      // Heal, and finish p2's addition with the same members (a new client, as after an
      // operator's failed command).
      c.restart(4);
      addGroup(c, P2, List.of(1, 4), Duration.ofSeconds(90));
      if (!p3Added) {
        addGroup(c, P3, List.of(1, 2, 3), Duration.ofSeconds(90));
      }
      cl.addPartition(P2).get(60, TimeUnit.SECONDS);
      assertEquals(List.of(P0, P1, P2, P3), cl.addPartition(P3).get(60, TimeUnit.SECONDS).active());
      // Every group delivers, the added ones included: new accounts go to p2 and p3 too.
      next = traffic(cl, ssmr, next);
      for (int i = 0; i < 12; i++, next++) {
        create(cl, next);
      }
      TreeSet<GroupId> homes = new TreeSet<>();
      for (long i = 0; i < next; i++) {
        homes.add(cl.locationOf(ObjId.valueOf(i)).get(30, TimeUnit.SECONDS));
      }
      assertTrue(homes.contains(P2) || homes.contains(P3), "new accounts in the added partitions: " + homes);
      Reply missing2 = ssmr.sendAccess(Command.access(new BankOps.Read(), ObjId.valueOf(9998)))
          .get(60, TimeUnit.SECONDS);
      assertEquals(Reply.Status.NOT_FOUND, missing2.status(), "S-SMR access of a missing object: " + missing2);
      // The total, read with one S-SMR command to every group.
      TreeSet<ObjId> all = new TreeSet<>();
      for (long i = 0; i < next; i++) {
        all.add(ObjId.valueOf(i));
      }
      Reply read = ssmr.sendAccess(Command.access(new BankOps.Read(), all)).get(60, TimeUnit.SECONDS);
      assertTrue(read.isOk(), "read: " + read);
      long total = 0;
      for (long b : (long[]) read.value()) {
        total += b;
      }
      assertEquals(next * INITIAL, total, "the total is conserved");
    }
  }

  /** Adds a group through a client of its own, as an operator's command does. */
  private static void addGroup(EmbeddedCluster c, GroupId g, List<Integer> members, Duration timeout)
      throws Exception {
    try (MulticastClient admin = c.newClient()) {
      ClusterAdmin.addGroup(admin, g, members, timeout);
    }
  }

  private static void create(Client cl, long id) throws Exception {
    Reply r = cl.sendCreate(Command.create(ObjId.valueOf(id), INITIAL)).get(60, TimeUnit.SECONDS);
    assertTrue(r.isOk(), "create " + id + ": " + r);
  }

  /**
   * Multicasts that need every group: creates (the oracle and a partition), DS-SMR transfers, and
   * S-SMR transfers (the oracle and every partition the client knows); each must complete.
   *
   * @return the next free account id
   */
  private static long traffic(Client cl, Client ssmr, long next) throws Exception {
    create(cl, next);
    long created = next + 1;
    for (long a = 0; a + 1 < created; a++) {
      Reply r;
      try {
        r = cl.sendAccess(Command.access(new BankOps.Transfer(a, a + 1, 1), ObjId.valueOf(a), ObjId.valueOf(a + 1)))
            .get(60, TimeUnit.SECONDS);
      } catch (TimeoutException | ExecutionException e) {
        throw new AssertionError("a DS-SMR transfer did not complete", e);
      }
      assertTrue(r.isOk(), "transfer: " + r);
      Reply s = ssmr.sendAccess(Command.access(new BankOps.Transfer(a + 1, a, 1), ObjId.valueOf(a + 1),
          ObjId.valueOf(a))).get(60, TimeUnit.SECONDS);
      assertTrue(s.isOk(), "S-SMR transfer: " + s);
    }
    return created;
  }
}
