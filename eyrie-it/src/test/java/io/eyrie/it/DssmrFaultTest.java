package io.eyrie.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.AuditReport;
import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Reply;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.GroupId;
import io.eyrie.examples.bank.BankOps;
import java.time.Duration;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The oracle leader's node and a partition leader's node are killed and restarted during a
 * move-heavy run: every command terminates with a correct reply, the total is conserved, and
 * the placement audit is clean.
 *
 * <p>On a failure, the test prints every node's progress ({@link EmbeddedCluster#describe()}) and
 * the JVM's threads. This test found that Ratis leaders which step down (a missed heartbeat on a
 * loaded machine) refused elections for 10 s by default, leaving groups without a leader long
 * enough for clients to time out; the nodes now wait one election timeout.
 */
@Timeout(300)
class DssmrFaultTest {
  static final int ACCOUNTS = 16;

  private static String threads() {
    StringBuilder b = new StringBuilder("\nthreads:\n");
    for (java.lang.management.ThreadInfo t : java.lang.management.ManagementFactory.getThreadMXBean()
        .dumpAllThreads(true, true)) {
      b.append('"').append(t.getThreadName()).append("\" ").append(t.getThreadState());
      if (t.getLockName() != null) {
        b.append(" on ").append(t.getLockName()).append(" owned by ").append(t.getLockOwnerName());
      }
      b.append('\n');
      StackTraceElement[] st = t.getStackTrace();
      for (int i = 0; i < Math.min(st.length, 25); i++) {
        b.append("    at ").append(st[i]).append('\n');
      }
    }
    return b.toString();
  }

  @Test
  void oracleAndPartitionLeadersCrashDuringMoves() throws Exception {
    long seed = DssmrFixture.seed("DssmrFaultTest");
    try (EmbeddedCluster c = DssmrFixture.bank(4, RandomTargetOracle::new)) {
      TreeSet<ObjId> all = DssmrFixture.createAccounts(c, Client.Mode.DSSMR, ACCOUNTS, 100L);
      AtomicInteger done = new AtomicInteger();
      List<Throwable> errors = new CopyOnWriteArrayList<>();
      List<Thread> threads = DssmrFixture.writers(3, seed, errors, (wi, rnd) -> {
        try (Client cl = DssmrFixture.client(c, Client.Mode.DSSMR, 3)) {
          for (int n = 0; n < 60; n++) {
            Reply r = cl.sendAccess(DssmrFixture.randomTransfer(rnd, ACCOUNTS, 30)).handle((rep, err) -> {
                  if (err != null) {
                    System.out.println("transfer failed: " + err + "\n" + c.describe());
                    throw new java.util.concurrent.CompletionException(err);
                  }
                  return rep;
                }).get(120, TimeUnit.SECONDS);
            DssmrFixture.assertTransferRan(r);
            done.incrementAndGet();
          }
        }
      });
      threads.forEach(Thread::start);
      io.eyrie.multicast.testing.Waits.until(Duration.ofSeconds(120), () -> done.get() > 30, () -> "progress");
      int oracleLeader = c.leaderOf(GroupId.valueOf("oracle"));
      System.out.println("killing node " + oracleLeader + " (oracle leader) after " + done.get() + " transfers");
      c.kill(oracleLeader);
      int before = done.get();
      io.eyrie.multicast.testing.Waits.until(Duration.ofSeconds(120), () -> done.get() > before + 20,
          () -> "progress without the oracle leader\n" + c.describe() + threads());
      c.restart(oracleLeader);
      int partitionLeader = 0;
      for (GroupId p : c.cluster().partitions()) {
        int l = c.leaderOf(p);
        if (l != 0 && l != oracleLeader) {
          partitionLeader = l;
          break;
        }
      }
      if (partitionLeader == 0) {
        partitionLeader = c.leaderOf(GroupId.valueOf("p0"));
      }
      final int victim = partitionLeader;
      int before2 = done.get();
      System.out.println("killing node " + victim + " (a partition leader) after " + before2 + " transfers");
      c.kill(victim);
      io.eyrie.multicast.testing.Waits.until(Duration.ofSeconds(120), () -> done.get() > before2 + 20,
          () -> "progress without node " + victim + "\n" + c.describe() + threads());
      c.restart(victim);
      for (Thread t : threads) {
        t.join(TimeUnit.MINUTES.toMillis(4));
      }
      if (!errors.isEmpty()) {
        System.out.println("after the run:\n" + c.describe() + threads());
      }
      assertTrue(errors.isEmpty(), "every command terminates with a correct reply: " + errors);
      assertEquals(180, done.get());
      try (Client cl = DssmrFixture.client(c, Client.Mode.DSSMR, 3)) {
        Reply r = cl.sendAccess(Command.access(new BankOps.Read(), all)).get(120, TimeUnit.SECONDS);
        long total = 0;
        for (long b : (long[]) r.value()) {
          assertTrue(b >= 0);
          total += b;
        }
        assertEquals(ACCOUNTS * 100L, total, "the total is conserved");
        AuditReport audit = cl.audit().get(60, TimeUnit.SECONDS);
        System.out.println("audit: " + audit);
        assertTrue(audit.clean(), audit.toString());
      }
    }
  }
}
