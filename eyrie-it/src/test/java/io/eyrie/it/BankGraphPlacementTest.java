package io.eyrie.it;

import static io.eyrie.it.DssmrFixture.INITIAL;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.AuditReport;
import io.eyrie.core.Client;
import io.eyrie.core.ClientStats;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Reply;
import io.eyrie.examples.bank.BankOps;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.oracle.OracleStateMachine;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The bank's random transfers have no locality: under the paper's rule DS-SMR gathers every
 * account in one partition over time. With the oracle's GRAPH placement the oracle soon sees that
 * moving does not pay and answers no target, and the client runs transfers between partitions
 * with S-SMR: moves stop, the accounts stay spread, and the bank stays correct (the total is
 * conserved, the placement audit is clean). Replay with -Deyrie.seed=N.
 */
@Timeout(240)
class BankGraphPlacementTest {
  static final int ACCOUNTS = 24;
  static final int TRANSFERS = 240;

  @Test
  void withoutLocalityMovesStopAndTransfersRunWithSsmr() throws Exception {
    long seed = DssmrFixture.seed("BankGraphPlacementTest");
    Random rnd = new Random(seed);
    try (EmbeddedCluster c = DssmrFixture.bank(4, () -> new OracleStateMachine(OracleStateMachine.Placement.GRAPH));
        Client cl = DssmrFixture.client(c, Client.Mode.DSSMR, 3)) {
      TreeSet<ObjId> all = createAccounts(cl);
      ClientStats half = null;
      for (int n = 0; n < TRANSFERS; n++) {
        if (n == TRANSFERS / 2) {
          half = cl.stats();
        }
        Reply r = cl.sendAccess(DssmrFixture.randomTransfer(rnd, ACCOUNTS, 80)).get(120, TimeUnit.SECONDS);
        DssmrFixture.assertTransferRan(r);
      }
      ClientStats end = cl.stats();
      long lateMoves = end.moves() - half.moves();
      long lateSsmr = end.multiPartition() - half.multiPartition();
      System.out.println("moves " + half.moves() + " then " + lateMoves + "; S-SMR executions " + half.multiPartition()
          + " then " + lateSsmr);
      assertTrue(lateSsmr > 0, "transfers between partitions ran with S-SMR in the second half");
      assertTrue(lateMoves * 10 <= TRANSFERS / 2, "moves have (nearly) stopped in the second half: " + lateMoves);

      BankTest.checkTotal(cl, all);
      AuditReport audit = cl.audit().get(60, TimeUnit.SECONDS);
      System.out.println("audit: " + audit);
      assertTrue(audit.clean(), audit.toString());
      assertEquals(ACCOUNTS, audit.objects());
      int largest = audit.perPartition().values().stream().mapToInt(Integer::intValue).max().orElse(0);
      assertTrue(largest < ACCOUNTS, "the accounts did not all end up in one partition: " + audit.perPartition());
    }
  }

  /**
   * Every account is created in p0 (an oracle whose creates all go there): the accounts are used
   * one at a time, so no command ever spans partitions and nothing but the rebalancer moves them.
   * It moves them toward the learned plan, which is balanced, while transfers keep running.
   */
  @Test
  void theRebalancerSpreadsObjectsCreatedInOnePartition() throws Exception {
    long seed = DssmrFixture.seed("BankGraphPlacementTest");
    Random rnd = new Random(seed);
    java.util.function.Supplier<OracleStateMachine> allInP0 = () -> new OracleStateMachine(
        OracleStateMachine.Placement.GRAPH) {
      @Override
      protected io.eyrie.multicast.GroupId getObjectPlacement(Command create) {
        return partitions().get(0);
      }
    };
    try (EmbeddedCluster c = DssmrFixture.bank(4, allInP0);
        Client cl = DssmrFixture.client(c, Client.Mode.DSSMR, 3);
        Client mover = DssmrFixture.client(c, Client.Mode.DSSMR, 3)) {
      TreeSet<ObjId> all = createAccounts(cl);
      assertEquals(ACCOUNTS, (int) cl.audit().get(60, TimeUnit.SECONDS).perPartition().get("p0"));
      try (io.eyrie.core.Rebalancer rebalancer = io.eyrie.core.Rebalancer.start(mover, java.time.Duration.ofMillis(500), 8)) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        int largest = ACCOUNTS;
        while (largest > 7) { // 24 accounts over 4 partitions: at most 10% above the average of 6
          if (System.nanoTime() > deadline) {
            throw new AssertionError("not spread within 90 s: " + cl.audit().get(60, TimeUnit.SECONDS).perPartition());
          }
          long a = rnd.nextInt(ACCOUNTS);
          Reply r = cl.sendAccess(Command.access(new BankOps.Read(), ObjId.valueOf(a)))
              .get(120, TimeUnit.SECONDS);
          assertTrue(r.isOk(), "single-account command: " + r);
          largest = cl.audit().get(60, TimeUnit.SECONDS).perPartition().values().stream()
              .mapToInt(Integer::intValue).max().orElse(0);
        }
        System.out.println("rebalancer moved " + rebalancer.moved());
        assertTrue(rebalancer.moved() > 0);
      }
      BankTest.checkTotal(cl, all);
      AuditReport audit = cl.audit().get(60, TimeUnit.SECONDS);
      System.out.println("audit: " + audit);
      assertTrue(audit.clean(), audit.toString());
      assertEquals(ACCOUNTS, audit.objects());
    }
  }

  static TreeSet<ObjId> createAccounts(Client cl) throws Exception {
    TreeSet<ObjId> all = new TreeSet<>();
    for (int i = 0; i < ACCOUNTS; i++) {
      ObjId id = ObjId.valueOf(i);
      all.add(id);
      assertTrue(cl.sendCreate(Command.create(id, INITIAL)).get(60, TimeUnit.SECONDS).isOk());
    }
    return all;
  }
}
