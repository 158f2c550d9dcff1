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
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.examples.bank.BankOps;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Timeout;

/**
 * Many clients transfer between random accounts of 4 partitions while others read every
 * balance: every read conserves the total with no negative balance, and the placement audit is
 * clean at the end. Replay with -Deyrie.seed=N.
 */
@Timeout(300)
class BankTest {
  static final int ACCOUNTS = 24;

  @ParameterizedTest
  @EnumSource(Client.Mode.class)
  void transfersConserveTheTotal(Client.Mode mode) throws Exception {
    long seed = DssmrFixture.seed("BankTest " + mode);
    try (EmbeddedCluster c = DssmrFixture.bank(4, RandomTargetOracle::new)) {
      TreeSet<ObjId> all = DssmrFixture.createAccounts(c, mode, ACCOUNTS, INITIAL);
      List<Throwable> errors = new CopyOnWriteArrayList<>();
      List<ClientStats> stats = new CopyOnWriteArrayList<>();
      List<Thread> threads = DssmrFixture.writers(4, seed, errors, (wi, rnd) -> {
        // Two writers fall back after one retry: forces S-SMR executions next to moves.
        try (Client cl = DssmrFixture.client(c, mode, wi < 2 ? 1 : 3)) {
          for (int n = 0; n < 40; n++) {
            Reply r = cl.sendAccess(DssmrFixture.randomTransfer(rnd, ACCOUNTS, 80)).get(120, TimeUnit.SECONDS);
            DssmrFixture.assertTransferRan(r);
          }
          stats.add(cl.stats());
        }
      });
      for (int rd = 0; rd < 2; rd++) {
        threads.add(new Thread(() -> {
          try (Client cl = DssmrFixture.client(c, mode, 3)) {
            for (int n = 0; n < 8; n++) {
              checkTotal(cl, all);
            }
            stats.add(cl.stats());
          } catch (Throwable e) {
            errors.add(e);
          }
        }));
      }
      threads.forEach(Thread::start);
      for (Thread t : threads) {
        t.join(TimeUnit.MINUTES.toMillis(4));
      }
      assertTrue(errors.isEmpty(), "client failures: " + errors);
      try (Client cl = DssmrFixture.client(c, mode, 3)) {
        checkTotal(cl, all);
        AuditReport audit = cl.audit().get(60, TimeUnit.SECONDS);
        System.out.println(mode + " audit: " + audit);
        assertTrue(audit.clean(), audit.toString());
        assertEquals(ACCOUNTS, audit.objects());
      }
      long moves = stats.stream().mapToLong(ClientStats::moves).sum();
      long fallbacks = stats.stream().mapToLong(ClientStats::fallbacks).sum();
      long multi = stats.stream().mapToLong(ClientStats::multiPartition).sum();
      System.out.println(mode + ": moves " + moves + ", fallbacks " + fallbacks + ", multi-partition " + multi
          + ", retries " + stats.stream().mapToLong(ClientStats::retries).sum());
      if (mode == Client.Mode.DSSMR) {
        assertTrue(moves > 0, "DS-SMR moved objects");
      } else {
        assertEquals(0, moves, "S-SMR never moves");
        assertTrue(multi > 0, "S-SMR executed multi-partition commands");
      }
    }
  }

  static void checkTotal(Client cl, TreeSet<ObjId> all) throws Exception {
    Reply r = cl.sendAccess(Command.access(new BankOps.Read(), all)).get(120, TimeUnit.SECONDS);
    assertTrue(r.isOk(), "read: " + r);
    long total = 0;
    for (long b : (long[]) r.value()) {
      assertTrue(b >= 0, "negative balance " + b);
      total += b;
    }
    assertEquals(ACCOUNTS * INITIAL, total, "the total is conserved");
  }
}
