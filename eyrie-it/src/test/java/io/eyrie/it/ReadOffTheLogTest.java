package io.eyrie.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Reply;
import io.eyrie.examples.bank.BankOps;
import io.eyrie.multicast.EmbeddedCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Reads that partitions serve off the log ({@link Client#sendRead}) on a real cluster: a counter
 * is raised by one deposit at a time through the log while another client keeps gathering it
 * with other accounts (the oracle picks a random partition, so the counter moves back and forth
 * and the readers' cached locations go stale), and readers read it off the log. Every read must
 * return at least the balance of the last deposit acknowledged before it was sent, at most the
 * number of deposits sent before it returned, and never less than that reader's previous read:
 * for a counter that only grows, that is linearizability. Replay with -Deyrie.seed=N.
 */
@Timeout(240)
class ReadOffTheLogTest {
  static final ObjId COUNTER = ObjId.valueOf(0);
  static final int OTHERS = 5;
  static final int DEPOSITS = 150;

  static Command read(ObjId id) {
    return Command.access(new BankOps.Read(), id);
  }

  @Test
  void readsOffTheLogAreLinearizableWhileTheirObjectMovesAndChanges() throws Exception {
    long seed = DssmrFixture.seed("ReadOffTheLogTest");
    try (EmbeddedCluster c = DssmrFixture.bank(2, RandomTargetOracle::new)) {
      try (Client setup = DssmrFixture.client(c, Client.Mode.DSSMR, 3)) {
        for (int i = 0; i <= OTHERS; i++) {
          assertTrue(setup.sendCreate(Command.create(ObjId.valueOf(i), 0L)).get(60, TimeUnit.SECONDS).isOk());
        }
        Reply first = setup.sendRead(read(COUNTER)).get(60, TimeUnit.SECONDS);
        assertEquals(0L, ((long[]) first.value())[0]);
        assertEquals(1, setup.stats().reads(), "served off the log");
        Reply missing = setup.sendRead(read(ObjId.valueOf(99))).get(60, TimeUnit.SECONDS);
        assertEquals(Reply.Status.NOT_FOUND, missing.status(), "an object that does not exist: " + missing);
      }

      AtomicLong invoked = new AtomicLong();
      AtomicLong acked = new AtomicLong();
      AtomicBoolean done = new AtomicBoolean();
      List<Throwable> errors = new CopyOnWriteArrayList<>();
      AtomicLong offTheLog = new AtomicLong();
      AtomicLong reads = new AtomicLong();
      AtomicLong moves = new AtomicLong();
      List<Thread> threads = new ArrayList<>();
      threads.add(new Thread(() -> {
        try (Client w = DssmrFixture.client(c, Client.Mode.DSSMR, 3)) {
          for (int i = 1; i <= DEPOSITS; i++) {
            invoked.incrementAndGet();
            Reply r = w.sendAccess(Command.access(new BankOps.Deposit(1), COUNTER)).get(60, TimeUnit.SECONDS);
            assertEquals((long) i, r.value(), "deposit " + i);
            acked.set(i);
          }
        } catch (Throwable e) {
          errors.add(e);
        } finally {
          done.set(true);
        }
      }));
      threads.add(new Thread(() -> {
        Random rnd = new Random(seed);
        try (Client m = DssmrFixture.client(c, Client.Mode.DSSMR, 3)) {
          while (!done.get()) {
            ObjId other = ObjId.valueOf(1 + rnd.nextInt(OTHERS));
            Reply r = m.sendAccess(Command.access(new BankOps.Transfer(other.value(), 0, 0), other, COUNTER))
                .get(60, TimeUnit.SECONDS);
            assertEquals("ok", r.value());
          }
          moves.set(m.stats().moves());
        } catch (Throwable e) {
          errors.add(e);
        }
      }));
      for (int k = 0; k < 2; k++) {
        threads.add(new Thread(() -> {
          try (Client rd = DssmrFixture.client(c, Client.Mode.DSSMR, 3)) {
            long last = 0;
            while (!done.get()) {
              long lower = acked.get();
              Reply r = rd.sendRead(read(COUNTER)).get(60, TimeUnit.SECONDS);
              long upper = invoked.get();
              long v = ((long[]) r.value())[0];
              assertTrue(v >= lower && v <= upper && v >= last, "read " + v + " after " + last + ", while between "
                  + lower + " and " + upper + " deposits were acknowledged and sent");
              last = v;
              reads.incrementAndGet();
            }
            offTheLog.addAndGet(rd.stats().reads());
          } catch (Throwable e) {
            errors.add(e);
          }
        }));
      }
      threads.forEach(Thread::start);
      for (Thread t : threads) {
        t.join(TimeUnit.SECONDS.toMillis(200));
      }
      if (!errors.isEmpty()) {
        throw new AssertionError("seed " + seed + ": " + errors.get(0), errors.get(0));
      }
      System.out.println("ReadOffTheLogTest: " + reads.get() + " reads, " + offTheLog.get() + " off the log, "
          + moves.get() + " moves");
      assertTrue(offTheLog.get() > 0, "some reads were served off the log");
      assertTrue(moves.get() > 0, "the counter moved");
      try (Client check = DssmrFixture.client(c, Client.Mode.DSSMR, 3)) {
        assertEquals((long) DEPOSITS, ((long[]) check.sendRead(read(COUNTER)).get(60, TimeUnit.SECONDS).value())[0]);
      }
    }
  }
}
