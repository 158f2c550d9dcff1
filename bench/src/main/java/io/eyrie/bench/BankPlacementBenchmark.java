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
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code bin/bench bank-placement}: the bank's random transfers (no locality) at 4 partitions
 * under three placements (issue 16): S-SMR (static, hashed by the oracle's default: fewest
 * objects), DS-SMR with the paper's rule (gathers accounts, in the end in one partition) and
 * DS-SMR with the learned placement and its rebalancer (which should see no locality, stop moving
 * and let S-SMR run the transfers between partitions).
 *
 * <p>The modes are compared in one JVM, so they must see the same JIT: each mode has its own
 * cluster, all started first; each is warmed up, then measured in alternating windows (round 1
 * in order, round 2 reversed, and so on: ABBA), and a mode's figure is the mean of its windows.
 * Run one after the other, the later modes got the warmer JIT (1.56x in favour of the last mode
 * on d57181f while running the same share of S-SMR executions).
 */
public final class BankPlacementBenchmark {
  private BankPlacementBenchmark() {}

  /** One mode's cluster, load clients and counters. */
  private static final class Mode implements AutoCloseable {
    final String name;
    final BankBenchCluster bank;
    final Rebalancer rebalancer;
    final AtomicInteger rr = new AtomicInteger();
    final int accounts;

    Mode(String name, int clients, int accounts) throws Exception {
      this.name = name;
      this.accounts = accounts;
      java.util.function.Supplier<io.eyrie.multicast.Deliverer> oracle = name.equals("graph")
          ? () -> new OracleStateMachine(OracleStateMachine.Placement.GRAPH) : OracleStateMachine::new;
      bank = BankBenchCluster.start(4, oracle, clients, name.equals("ssmr") ? Client.Mode.SSMR : Client.Mode.DSSMR);
      bank.createAccounts(accounts, 1_000_000L);
      rebalancer = name.equals("graph") ? Rebalancer.start(bank.mover, Duration.ofSeconds(1), 64) : null;
    }

    /** Moves, S-SMR executions and commands of the load clients so far. */
    long[] counters() {
      long[] c = new long[3];
      for (Client cl : bank.clients) {
        ClientStats s = cl.stats();
        c[0] += s.moves();
        c[1] += s.multiPartition();
        c[2] += s.commands();
      }
      return c;
    }

    /** Runs transfers for a window (after {@code warmupS} unmeasured seconds) and returns its figures. */
    Window window(String label, int outstanding, int warmupS, int durationS) {
      List<Client> cs = bank.clients;
      long[] before = counters();
      MulticastBenchmark.Row row = MulticastBenchmark.phase(label, 4, outstanding, warmupS, durationS, () -> {
        Client c = cs.get(Math.floorMod(rr.getAndIncrement(), cs.size()));
        ThreadLocalRandom r = ThreadLocalRandom.current();
        int a = r.nextInt(accounts);
        int b = (a + 1 + r.nextInt(accounts - 1)) % accounts;
        return c.sendAccess(Command.access(new BankOps.Transfer(a, b, 1), ObjId.valueOf(a), ObjId.valueOf(b)));
      }, () -> "");
      long[] after = counters();
      double commands = Math.max(1, after[2] - before[2]);
      return new Window(name, row.opsPerSec(), row.p50(), row.p99(), (after[0] - before[0]) / commands,
          (after[1] - before[1]) / commands);
    }

    @Override
    public void close() {
      if (rebalancer != null) {
        rebalancer.close();
      }
      bank.close();
    }
  }

  /** One measured window of one mode (moves and S-SMR executions per transfer, warm-up included). */
  record Window(String mode, double opsPerSec, double p50, double p99, double movesPerTransfer, double ssmrPerTransfer) {}

  public static void main(String[] args) throws Exception {
    BenchArgs o = BenchArgs.parse(args);
    BankLoad load = BankLoad.of(o, 200);
    List<String> names = List.copyOf(o.list("modes", "ssmr,dssmr,graph"));
    for (String n : names) {
      if (!List.of("ssmr", "dssmr", "graph").contains(n)) {
        throw new IllegalArgumentException("unknown mode " + n + " (ssmr, dssmr, graph)");
      }
    }
    int warmup = o.integer("warmup", 20);
    int duration = o.integer("duration", 10);
    int rounds = o.integer("rounds", 2);
    Map<String, Mode> modes = new LinkedHashMap<>();
    List<Window> windows = new ArrayList<>();
    Map<String, String> partitions = new LinkedHashMap<>();
    try {
      for (String n : names) {
        System.out.println("bank " + n + ": " + load.accounts() + " accounts, random transfers");
        modes.put(n, new Mode(n, load.clients(), load.accounts()));
      }
      for (String n : names) {
        modes.get(n).window("warm-up " + n, load.outstanding(), warmup, 1);
      }
      for (int round = 0; round < rounds; round++) {
        List<String> order = new ArrayList<>(names);
        if (round % 2 == 1) {
          java.util.Collections.reverse(order);
        }
        for (String n : order) {
          windows.add(modes.get(n).window("round " + (round + 1) + " " + n, load.outstanding(), 0, duration));
        }
      }
      for (String n : names) {
        AuditReport audit = modes.get(n).bank.clients.get(0).audit().get(60, TimeUnit.SECONDS);
        int largest = audit.perPartition().values().stream().mapToInt(Integer::intValue).max().orElse(0);
        Rebalancer rb = modes.get(n).rebalancer;
        partitions.put(n, String.format(Locale.ROOT, "%.1f%% %s%s", 100.0 * largest / Math.max(1, audit.objects()),
            audit.perPartition(), rb == null ? "" : "; rebalancer moved " + rb.moved() + " accounts"));
      }
    } finally {
      for (Mode m : modes.values()) {
        m.close();
      }
    }
    String md = report(names, windows, partitions, load.accounts(), load.clients(), load.window(), warmup, duration,
        rounds);
    Files.createDirectories(load.out());
    Files.writeString(load.out().resolve("bank-placement.md"), md, StandardCharsets.UTF_8);
    System.out.print(md);
    System.exit(0);
  }

  static String report(List<String> names, List<Window> windows, Map<String, String> partitions, int accounts,
      int clients, int window, int warmup, int duration, int rounds) {
    StringBuilder md = new StringBuilder(String.format(Locale.ROOT, "# Bank, random transfers, 4 partitions (issue 16)%n%n"
        + "One JVM, a fresh embedded cluster per mode (3 nodes, the oracle and 4 partitions), all started first;"
        + " %d accounts, %d clients x %d outstanding transfers between random accounts; each mode warmed up %d s,"
        + " then %d rounds of %d s windows, the modes in order in odd rounds and reversed in even ones (ABBA);"
        + " a mode's figure is the mean of its windows.%n%n| mode | transfers/s | p50 ms | p99 ms | moves per transfer"
        + " | S-SMR executions per transfer | largest partition's share of the accounts (end) |%n|---|---|---|---|---|---|---|%n",
        accounts, clients, window, warmup, rounds, duration));
    for (String n : names) {
      List<Window> w = windows.stream().filter(x -> x.mode().equals(n)).toList();
      md.append(String.format(Locale.ROOT, "| %s | %.0f | %.1f | %.1f | %.3f | %.3f | %s |%n", n,
          mean(w, Window::opsPerSec), mean(w, Window::p50), mean(w, Window::p99), mean(w, Window::movesPerTransfer),
          mean(w, Window::ssmrPerTransfer), partitions.getOrDefault(n, "")));
    }
    md.append(String.format(Locale.ROOT, "%n| window | mode | transfers/s | p50 ms | p99 ms | moves per transfer"
        + " | S-SMR executions per transfer |%n|---|---|---|---|---|---|---|%n"));
    int i = 0;
    for (Window w : windows) {
      md.append(String.format(Locale.ROOT, "| %d | %s | %.0f | %.1f | %.1f | %.3f | %.3f |%n", ++i, w.mode(),
          w.opsPerSec(), w.p50(), w.p99(), w.movesPerTransfer(), w.ssmrPerTransfer()));
    }
    if (names.size() > 1) {
      md.append(String.format(Locale.ROOT, "%nThroughput against %s, per round:", names.get(0)));
      for (int r = 0; r < rounds; r++) {
        List<Window> round = windows.subList(r * names.size(), (r + 1) * names.size());
        double base = round.stream().filter(w -> w.mode().equals(names.get(0))).findFirst().orElseThrow().opsPerSec();
        md.append(String.format(Locale.ROOT, " round %d:", r + 1));
        for (String n : names.subList(1, names.size())) {
          double v = round.stream().filter(w -> w.mode().equals(n)).findFirst().orElseThrow().opsPerSec();
          md.append(String.format(Locale.ROOT, " %s %.2f", n, v / Math.max(1e-9, base)));
        }
        md.append(';');
      }
      md.append(String.format(Locale.ROOT, "%n"));
    }
    return md.toString();
  }

  private static double mean(List<Window> w, java.util.function.ToDoubleFunction<Window> f) {
    return w.stream().mapToDouble(f).average().orElse(Double.NaN);
  }
}
