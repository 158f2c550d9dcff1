package io.eyrie.it;

import static io.eyrie.it.DssmrFixture.INITIAL;
import static io.eyrie.it.DssmrFixture.P0;
import static io.eyrie.it.DssmrFixture.P1;
import static io.eyrie.it.DssmrFixture.P2;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.AuditReport;
import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.PartitionTable;
import io.eyrie.core.Reply;
import io.eyrie.examples.bank.BankOps;
import io.eyrie.multicast.ClusterAdmin;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.MulticastClient;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Elastic partitions on a running bank (docs/design.md 4.9 and 5.2): a partition group added to
 * the cluster and to the oracle's table takes new accounts, a client that never heard of it
 * still runs S-SMR transfers that reach it (it is told to learn the view and sends again), and a
 * retired partition is drained by linearizable moves while transfers go on, with no command
 * failing, the total conserved and the placement audit clean. Replay with -Deyrie.seed=N.
 */
@Timeout(240)
class ElasticPartitionsTest {
  static final int FIRST = 24;
  static final int MORE = 12;

  @Test
  void addAPartitionUnderLoadThenDrainAnother() throws Exception {
    long seed = DssmrFixture.seed("ElasticPartitionsTest");
    try (EmbeddedCluster c = DssmrFixture.bank(2);
        Client cl = DssmrFixture.client(c, Client.Mode.DSSMR, 3);
        // Built on the cluster file: it learns p2 only when a command tells it to.
        Client background = DssmrFixture.client(c, Client.Mode.DSSMR, 3);
        Client oldSsmr = DssmrFixture.client(c, Client.Mode.SSMR, 0);
        MulticastClient admin = c.newClient()) {
      TreeSet<ObjId> all = new TreeSet<>();
      for (int i = 0; i < FIRST; i++) {
        all.add(ObjId.valueOf(i));
        assertTrue(cl.sendCreate(Command.create(ObjId.valueOf(i), INITIAL)).get(60, TimeUnit.SECONDS).isOk());
      }
      AtomicBoolean stop = new AtomicBoolean();
      AtomicLong done = new AtomicLong();
      AtomicReference<Object> failure = new AtomicReference<>();
      Random rnd = new Random(seed);
      Thread load = new Thread(() -> {
        while (!stop.get() && failure.get() == null) {
          int a;
          int b;
          synchronized (rnd) {
            a = rnd.nextInt(FIRST);
            b = (a + 1 + rnd.nextInt(FIRST - 1)) % FIRST;
          }
          try {
            Reply r = background.sendAccess(Command.access(new BankOps.Transfer(a, b, 1), ObjId.valueOf(a),
                ObjId.valueOf(b))).get(60, TimeUnit.SECONDS);
            if (!r.isOk()) {
              failure.set("transfer " + a + "->" + b + ": " + r);
            }
            done.incrementAndGet();
          } catch (Exception e) {
            failure.set(e);
          }
        }
      }, "elastic-load");
      load.start();

      // Add p2: a new Raft group on the running nodes, then a partition in the oracle's table.
      ClusterAdmin.addGroup(admin, P2, List.of(1, 2, 3), Duration.ofSeconds(60));
      PartitionTable t = cl.addPartition(P2).get(60, TimeUnit.SECONDS);
      assertEquals(List.of(P0, P1, P2), t.active());
      for (int i = FIRST; i < FIRST + MORE; i++) {
        all.add(ObjId.valueOf(i));
        assertTrue(cl.sendCreate(Command.create(ObjId.valueOf(i), INITIAL)).get(60, TimeUnit.SECONDS).isOk());
      }
      t = cl.partitionTable().get(30, TimeUnit.SECONDS);
      assertTrue(t.objectsAt(P2) >= MORE / 2, "the new partition took new accounts: " + t);
      ObjId inP2 = null;
      for (int i = FIRST; i < FIRST + MORE && inP2 == null; i++) {
        if (P2.equals(cl.locationOf(ObjId.valueOf(i)).get(30, TimeUnit.SECONDS))) {
          inP2 = ObjId.valueOf(i);
        }
      }
      assertTrue(inP2 != null, "an account in p2");
      // A client whose view has only p0 and p1 runs an S-SMR transfer touching p2: the partitions
      // answer that it missed one, it learns the view and sends to all three.
      assertEquals(List.of(P0, P1), oldSsmr.partitions());
      Reply r = oldSsmr.sendAccess(Command.access(new BankOps.Transfer(0, inP2.value(), 5), ObjId.valueOf(0), inP2))
          .get(60, TimeUnit.SECONDS);
      assertTrue(r.isOk() && "ok".equals(r.value()), "S-SMR transfer into p2 from an old view: " + r);
      assertEquals(List.of(P0, P1, P2), oldSsmr.partitions(), "it learned p2");

      // Drain p0 while transfers go on.
      long before = done.get();
      t = cl.drain(P0, 8, Duration.ofSeconds(90)).get(120, TimeUnit.SECONDS);
      assertTrue(t.drained(P0), "p0 drained: " + t);
      assertEquals(List.of(P1, P2), t.active());
      Reply created = cl.sendCreate(Command.create(ObjId.valueOf(1000), INITIAL)).get(60, TimeUnit.SECONDS);
      assertTrue(created.isOk());
      all.add(ObjId.valueOf(1000));
      assertTrue(!P0.equals(cl.locationOf(ObjId.valueOf(1000)).get(30, TimeUnit.SECONDS)), "nothing new in p0");
      io.eyrie.multicast.testing.Waits.until(Duration.ofSeconds(30),
          () -> done.get() >= before + 20 || failure.get() != null, () -> "20 transfers after the drain");
      stop.set(true);
      load.join(90_000);
      assertEquals(null, failure.get(), "no command failed");
      assertTrue(done.get() > before, "transfers went on during and after the drain");

      AuditReport audit = DssmrFixture.assertAuditClean(cl, 60);
      assertEquals(0, audit.perPartition().getOrDefault("p0", 0), "p0 holds no account: " + audit.perPartition());
      long total = 0;
      Reply read = cl.sendAccess(Command.access(new BankOps.Read(), all)).get(120, TimeUnit.SECONDS);
      assertTrue(read.isOk(), "read: " + read);
      for (long b : (long[]) read.value()) {
        total += b;
      }
      assertEquals(all.size() * INITIAL, total, "the total is conserved");

      // A drained partition can be made active again.
      assertEquals(List.of(P0, P1, P2), cl.addPartition(P0).get(30, TimeUnit.SECONDS).active());
    }
  }
}
