package io.eyrie.it;

import static io.eyrie.it.DssmrSim.ORACLE;
import static io.eyrie.it.DssmrSim.p;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.protocol.AccessReq;
import io.eyrie.core.protocol.CoreReply;
import io.eyrie.core.protocol.CreateReq;
import io.eyrie.core.protocol.MoveReq;
import io.eyrie.core.protocol.SsmrReq;
import io.eyrie.examples.bank.BankOps;
import io.eyrie.multicast.GroupId;
import io.eyrie.it.DssmrSim.Msg;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Partitions let commands on other objects overtake a command that waits for another group
 * (docs/design.md 5.3 and 6). Random schedules on the deterministic {@link DssmrSim}: S-SMR
 * transfers and whole-bank reads sent to every partition, single-partition transfers, moves of
 * accounts between partitions, channels held and released at random, and leaders failed over
 * (restored from their snapshots). Transfers keep the bank's total, so every whole-bank read
 * that completes must see exactly the total (a read that saw part of a transfer, or a transfer
 * that ran on a stale copy, breaks it), no S-SMR command sent everywhere may miss an account (a
 * move's destination holds the account until it arrives), and in the end every command has an
 * answer and nothing is left waiting. Seeds are printed; rerun one with {@code -Dsim.seed=N}.
 */
@Timeout(120)
class PartitionOverlapSimTest {
  private static final int PARTITIONS = 3;
  private static final int ACCOUNTS = 8;
  private static final long BALANCE = 100;

  @Test
  void randomSchedulesKeepTheBanksTotalInEveryRead() {
    String fixed = System.getProperty("sim.seed");
    long base = fixed != null ? Long.parseLong(fixed) : System.nanoTime();
    int runs = fixed != null ? 1 : 60;
    for (int i = 0; i < runs; i++) {
      long seed = base + i;
      try {
        run(seed);
      } catch (AssertionError | RuntimeException e) {
        throw new AssertionError("seed " + seed + " (rerun with -Dsim.seed=" + seed + "): " + e.getMessage(), e);
      }
    }
    System.out.println("PartitionOverlapSimTest: " + runs + " schedules from seed " + base);
  }

  private static void run(long seed) {
    Random rnd = new Random(seed);
    DssmrSim sim = new DssmrSim(PARTITIONS);
    GroupId[] parts = new GroupId[PARTITIONS];
    for (int i = 0; i < PARTITIONS; i++) {
      parts[i] = p(i);
    }
    GroupId[] where = new GroupId[ACCOUNTS];
    List<ObjId> all = new ArrayList<>();
    for (int a = 0; a < ACCOUNTS; a++) {
      ObjId id = ObjId.valueOf(a + 1);
      where[a] = parts[a % PARTITIONS];
      all.add(id);
      Msg c = sim.submitAll(sim.msg(new CreateReq(Command.create(id, BALANCE), where[a]), where[a], ORACLE,
          where[a]));
      sim.settle();
      assertEquals(CoreReply.Status.OK, sim.replies.get(c.id()).status());
    }
    GroupId[] everyPartition = parts.clone();
    List<Msg> reads = new ArrayList<>();
    List<Msg> sent = new ArrayList<>();
    List<GroupId> groups = new ArrayList<>(sim.groups.keySet());
    for (int step = 0; step < 300; step++) {
      int what = rnd.nextInt(100);
      if (what < 25) {
        int from = rnd.nextInt(ACCOUNTS);
        int to = rnd.nextInt(ACCOUNTS);
        if (from == to) {
          continue;
        }
        Command t = Command.access(new BankOps.Transfer(from + 1, to + 1, 1 + rnd.nextInt(5)), all.get(from),
            all.get(to));
        sent.add(sim.submitAll(sim.msg(new SsmrReq(t), parts[rnd.nextInt(PARTITIONS)], everyPartition)));
      } else if (what < 35) {
        Msg r = sim.submitAll(sim.msg(new SsmrReq(Command.access(new BankOps.Read(), all)),
            parts[rnd.nextInt(PARTITIONS)], everyPartition));
        reads.add(r);
        sent.add(r);
      } else if (what < 45) {
        // A single-partition transfer where the client believes both accounts are (RETRY if not).
        int from = rnd.nextInt(ACCOUNTS);
        int to = rnd.nextInt(ACCOUNTS);
        GroupId at = where[from];
        if (from == to) {
          continue;
        }
        Command t = Command.access(new BankOps.Transfer(from + 1, to + 1, 1), all.get(from), all.get(to));
        sent.add(sim.submitAll(sim.msg(new AccessReq(t), at, at)));
      } else if (what < 50) {
        int a = rnd.nextInt(ACCOUNTS);
        GroupId dst = parts[rnd.nextInt(PARTITIONS)];
        if (dst.equals(where[a])) {
          continue;
        }
        sent.add(sim.submitAll(sim.msg(new MoveReq(new ObjId[] {all.get(a)}, where[a], dst), dst, ORACLE,
            where[a], dst)));
        where[a] = dst; // moves of one account are ordered: the next one starts where this one ends
      } else if (what < 80) {
        GroupId a = groups.get(rnd.nextInt(groups.size()));
        GroupId b = groups.get(rnd.nextInt(groups.size()));
        if (!a.equals(b)) {
          sim.ship(a, b);
        }
      } else if (what < 90) {
        GroupId a = groups.get(rnd.nextInt(groups.size()));
        GroupId b = groups.get(rnd.nextInt(groups.size()));
        if (!a.equals(b)) {
          if (rnd.nextBoolean()) {
            sim.hold(a, b);
          } else {
            sim.release(a, b);
          }
        }
      } else if (what < 93) {
        sim.failOver(groups.get(rnd.nextInt(groups.size())));
      } else {
        sim.settle();
      }
    }
    for (GroupId a : groups) {
      for (GroupId b : groups) {
        sim.release(a, b);
      }
    }
    sim.settle();
    for (Msg m : sent) {
      CoreReply r = sim.replies.get(m.id());
      assertNotNull(r, () -> "no answer for " + m.id() + ": " + sim.errors.get(m.id()));
      assertTrue(r.status() != CoreReply.Status.NOT_FOUND, () -> "an account was missing for " + m.id());
    }
    for (Msg r : reads) {
      long[] balances = (long[]) sim.replies.get(r.id()).value();
      long sum = 0;
      for (long b : balances) {
        sum += b;
      }
      assertEquals(BALANCE * ACCOUNTS, sum, () -> "read " + r.id() + " saw part of a transfer: "
          + java.util.Arrays.toString(balances));
    }
    Msg last = sim.submitAll(sim.msg(new SsmrReq(Command.access(new BankOps.Read(), all)), p(0),
        everyPartition));
    sim.settle();
    long sum = 0;
    for (long b : (long[]) sim.replies.get(last.id()).value()) {
      sum += b;
    }
    assertEquals(BALANCE * ACCOUNTS, sum);
    sim.groups.forEach((g, s) -> assertEquals(0, s.queuedCount(), g + " has nothing left"));
  }
}
