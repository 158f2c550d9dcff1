package io.eyrie.bench;

import io.eyrie.core.AuditReport;
import io.eyrie.core.Client;
import io.eyrie.core.ClientStats;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Rebalancer;
import io.eyrie.examples.bank.BankOps;
import io.eyrie.oracle.OracleStateMachine;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The bank's random transfers (no locality) at 4 partitions under three placements, back to
 * back in one run (issue 16): S-SMR (static, hashed by the oracle's default: fewest objects),
 * DS-SMR with the paper's rule (gathers accounts, in the end in one partition) and DS-SMR with
 * the learned placement and its rebalancer (which should see no locality, stop moving and let
 * S-SMR run the transfers between partitions). Reports throughput, moves and the largest
 * partition's share of the accounts at the end.
 *
 * <pre>
 * java -cp bench/target/eyrie-bench.jar io.eyrie.bench.BankPlacementBenchmark [--duration 15] [--warmup 20]
 *     [--clients 8] [--window 16] [--accounts 200] [--out bench/results/issue16]
 * </pre>
 */
public final class BankPlacementBenchmark {
  private BankPlacementBenchmark() {}

  public static void main(String[] args) throws Exception {
    var o = MulticastBenchmark.parse(args);
    int clients = Integer.parseInt(o.getOrDefault("clients", "8"));
    int window = Integer.parseInt(o.getOrDefault("window", "16"));
    int warmup = Integer.parseInt(o.getOrDefault("warmup", "20"));
    int duration = Integer.parseInt(o.getOrDefault("duration", "15"));
    int accounts = Integer.parseInt(o.getOrDefault("accounts", "200"));
    Path out = Path.of(o.getOrDefault("out", "bench/results/issue16"));
    StringBuilder md = new StringBuilder(String.format(Locale.ROOT, "# Bank, random transfers, 4 partitions (issue 16)%n%n"
        + "One run, modes back to back, each on a fresh embedded cluster (3 nodes, the oracle and 4 partitions);"
        + " %d accounts, %d clients x %d outstanding transfers between random accounts, %d s warm-up then %d s"
        + " measured.%n%n| mode | transfers/s | p50 ms | p99 ms | moves per transfer (whole run) | S-SMR executions per transfer"
        + " (whole run) | largest partition's share of the accounts |%n|---|---|---|---|---|---|---|%n",
        accounts, clients, window, warmup, duration));
    for (String mode : new String[] {"ssmr", "dssmr", "graph"}) {
      md.append(run(mode, clients, window, warmup, duration, accounts));
    }
    Files.createDirectories(out);
    Files.writeString(out.resolve("bank-placement.md"), md.toString(), StandardCharsets.UTF_8);
    System.out.print(md);
    System.exit(0);
  }

  static String run(String mode, int clients, int window, int warmup, int duration, int accounts) throws Exception {
    java.util.function.Supplier<io.eyrie.multicast.Deliverer> oracle = mode.equals("graph")
        ? () -> new OracleStateMachine(OracleStateMachine.Placement.GRAPH) : OracleStateMachine::new;
    Client.Mode cm = mode.equals("ssmr") ? Client.Mode.SSMR : Client.Mode.DSSMR;
    try (BankBenchCluster bank = BankBenchCluster.start(4, oracle, clients, cm)) {
      List<Client> cs = bank.clients;
      Client mover = bank.mover;
      bank.createAccounts(accounts, 1_000_000L);
      Rebalancer rebalancer = mode.equals("graph") ? Rebalancer.start(mover, Duration.ofSeconds(1), 64) : null;
      AtomicInteger rr = new AtomicInteger();
      System.out.println("bank " + mode + ": " + accounts + " accounts, random transfers");
      MulticastBenchmark.Row row = MulticastBenchmark.phase("transfers " + mode, 4, clients * window, warmup, duration,
          () -> {
            Client c = cs.get(Math.floorMod(rr.getAndIncrement(), cs.size()));
            ThreadLocalRandom r = ThreadLocalRandom.current();
            int a = r.nextInt(accounts);
            int b = (a + 1 + r.nextInt(accounts - 1)) % accounts;
            return c.sendAccess(Command.access(new BankOps.Transfer(a, b, 1), ObjId.valueOf(a), ObjId.valueOf(b)));
          }, () -> "", null);
      long moves = 0;
      long ssmr = 0;
      long commands = 0;
      for (Client c : cs) {
        ClientStats s = c.stats();
        moves += s.moves();
        ssmr += s.multiPartition();
        commands += s.commands();
      }
      if (rebalancer != null) {
        rebalancer.close();
      }
      AuditReport audit = cs.get(0).audit().get(60, TimeUnit.SECONDS);
      int largest = audit.perPartition().values().stream().mapToInt(Integer::intValue).max().orElse(0);
      String line = String.format(Locale.ROOT, "| %s | %.0f | %.1f | %.1f | %.3f | %.3f | %.1f%% %s%s |%n", mode,
          row.opsPerSec(), row.p50(), row.p99(), moves / (double) Math.max(1, commands),
          ssmr / (double) Math.max(1, commands), 100.0 * largest / Math.max(1, audit.objects()), audit.perPartition(),
          rebalancer == null ? "" : "; rebalancer moved " + rebalancer.moved() + " accounts");
      return line;
    }
  }
}
