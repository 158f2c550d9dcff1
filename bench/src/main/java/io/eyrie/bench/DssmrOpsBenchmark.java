package io.eyrie.bench;

import io.eyrie.bench.MulticastBenchmark.Row;
import io.eyrie.core.Client;
import io.eyrie.core.ClientStats;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Reply;
import io.eyrie.examples.bank.BankOps;
import io.eyrie.oracle.OracleStateMachine;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The oracle's side of DS-SMR under load, through the public client API on an embedded bank
 * cluster (3 nodes, the oracle and 4 partitions): creates and deletes, which the oracle decides,
 * and transfers between random accounts, which move accounts between partitions. Part of
 * {@code bin/bench multicast}; also runnable alone (it uses only the public API, so the same
 * source measures an older build):
 *
 * <pre>
 * java -cp bench/target/eyrie-bench.jar io.eyrie.bench.DssmrOpsBenchmark [--duration 15] [--warmup 5] [--clients 8] [--window 16]
 * </pre>
 */
public final class DssmrOpsBenchmark {
  private static final int ACCOUNTS = 1000;

  private DssmrOpsBenchmark() {}

  public static void main(String[] args) throws Exception {
    BenchArgs o = BenchArgs.parse(args);
    List<Row> rows = run(o.integer("clients", 8), o.integer("window", 16),
        o.integer("warmup", 5), o.integer("duration", 15));
    for (Row r : rows) {
      System.out.printf(Locale.ROOT, "RESULT | %s | %.0f | %.2f | %.2f | %d | %s |%n", r.name(), r.opsPerSec(), r.p50(),
          r.p99(), r.errors(), r.cost());
    }
    System.exit(0);
  }

  /** Runs the two phases and returns their rows. */
  public static List<Row> run(int clients, int window, int warmup, int duration) throws Exception {
    List<Row> rows = new ArrayList<>();
    try (BankBenchCluster bank = BankBenchCluster.start(4, OracleStateMachine::new, clients, Client.Mode.DSSMR)) {
      List<Client> cs = bank.clients;
      AtomicInteger rr = new AtomicInteger();
      AtomicLong nextId = new AtomicLong(1_000_000);

      System.out.println("DS-SMR oracle: create then delete a fresh account (2 oracle commands per op)");
      rows.add(MulticastBenchmark.phase("oracle create+delete", 2, clients * window, warmup, duration, () -> {
        Client c = cs.get(Math.floorMod(rr.getAndIncrement(), cs.size()));
        ObjId id = ObjId.valueOf(nextId.getAndIncrement());
        return c.sendCreate(Command.create(id, 0L)).thenApply(DssmrOpsBenchmark::ok)
            .thenCompose(r -> c.sendDelete(Command.delete(id, null))).thenApply(DssmrOpsBenchmark::ok);
      }, () -> "2 oracle commands (a create and a delete) per op"));

      System.out.printf("DS-SMR moves: %d accounts, transfers between random pairs%n", ACCOUNTS);
      List<CompletableFuture<Reply>> setup = new ArrayList<>();
      for (int i = 0; i < ACCOUNTS; i++) {
        setup.add(cs.get(i % cs.size()).sendCreate(Command.create(ObjId.valueOf(i), 1_000_000L)));
        if (setup.size() == clients * window) {
          CompletableFuture.allOf(setup.toArray(new CompletableFuture[0])).get(120, TimeUnit.SECONDS);
          setup.clear();
        }
      }
      CompletableFuture.allOf(setup.toArray(new CompletableFuture[0])).get(120, TimeUnit.SECONDS);
      long[] before = totals(cs);
      Row transfers = MulticastBenchmark.phase("transfers (random pairs)", 4, clients * window, warmup, duration, () -> {
        Client c = cs.get(Math.floorMod(rr.getAndIncrement(), cs.size()));
        ThreadLocalRandom r = ThreadLocalRandom.current();
        int a = r.nextInt(ACCOUNTS);
        int b = (a + 1 + r.nextInt(ACCOUNTS - 1)) % ACCOUNTS;
        return c.sendAccess(Command.access(new BankOps.Transfer(a, b, 1), ObjId.valueOf(a), ObjId.valueOf(b)))
            .thenApply(DssmrOpsBenchmark::ok);
      }, () -> {
        long[] after = totals(cs);
        return String.format(Locale.ROOT, "%.3f moves per command", (after[0] - before[0])
            / (double) Math.max(1, after[1] - before[1]));
      });
      rows.add(transfers);
      long[] after = totals(cs);
      double perCommand = (after[0] - before[0]) / (double) Math.max(1, after[1] - before[1]);
      rows.add(new Row("moves (estimated: transfers/s x moves per command)", 3, transfers.opsPerSec() * perCommand,
          Double.NaN, Double.NaN, 0, "multicast to {oracle, source, target}"));
    }
    return rows;
  }

  /** Moves and commands of all clients so far. */
  private static long[] totals(List<Client> cs) {
    long[] t = new long[2];
    for (Client c : cs) {
      ClientStats s = c.stats();
      t[0] += s.moves();
      t[1] += s.commands();
    }
    return t;
  }

  private static Reply ok(Reply r) {
    if (!r.isOk()) {
      throw new IllegalStateException("refused: " + r.reason());
    }
    return r;
  }
}
