package io.eyrie.bench;

import io.eyrie.core.AuditReport;
import io.eyrie.core.Client;
import io.eyrie.core.ClientStats;
import io.eyrie.core.Rebalancer;
import io.eyrie.oracle.OracleStateMachine;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntUnaryOperator;

/**
 * A workload whose communities change halfway, under the learned placement (issue 16: "a
 * workload that changes its communities halfway: multi-partition share back under 2% within 60 s
 * of the change").
 *
 * <p>An embedded cluster (3 nodes, the oracle with {@code OracleStateMachine.Placement.GRAPH}
 * and 4 partitions) runs the bank with N accounts, created where the oracle puts them, and a
 * {@link Rebalancer} moving up to 64 accounts a second toward the oracle's plan. A closed loop of
 * DS-SMR clients sends transfers of 1 from a random account a to a random other account of a's
 * community. Phase A, from the start: account i belongs to community {@code i % C}. Phase B,
 * after {@code --phase} seconds: community {@code i / (N / C)}, so every phase-A community is
 * scattered over all the phase-B ones. Every second it records the transfers completed and the
 * multi-partition share of the commands the clients issued in that second: (moves + S-SMR
 * executions) / commands, from the clients' {@link ClientStats}. A phase has converged at second
 * s when seconds s to s+4 of it all have a share under 2%.
 *
 * <p>Writes {@code community-shift.md} (setup, summary, per-second table) and
 * {@code community-shift.csv} (per second) into {@code --out}.
 *
 * <pre>
 * bin/bench community-shift [--phase 90s] [--accounts 400] [--communities 16] [--clients 8] [--window 16]
 *     [--out bench/results/issue16]
 * java -cp bench/target/eyrie-bench.jar io.eyrie.bench.CommunityShiftBenchmark [--phase 90] ...
 * </pre>
 */
public final class CommunityShiftBenchmark {
  /** The share below which a second counts as converged. */
  static final double TARGET = 0.02;
  /** How many consecutive seconds under the target make a phase converged. */
  static final int HOLD = 5;
  /** The window, in seconds, at the end of a phase that the summary averages over. */
  static final int TAIL = 10;

  private CommunityShiftBenchmark() {}

  /** One second of the run. */
  record Second(int index, char phase, int phaseSecond, long transfers, long errors, long commands, long moves,
      long multiPartition, long retries, long rebalanced, long rebalancedTotal) {
    double share() {
      return commands == 0 ? 0 : (moves + multiPartition) / (double) commands;
    }
  }

  /**
   * Entry point.
   *
   * @param args {@code --name value} options, see the class comment
   * @throws Exception if the cluster fails
   */
  public static void main(String[] args) throws Exception {
    BenchArgs o = BenchArgs.parse(args);
    BankLoad load = BankLoad.of(o, 400);
    int phase = o.integer("phase", 90);
    int communities = o.integer("communities", 16);
    if (communities < 1 || load.accounts() / communities < 2 || phase < 1) {
      throw new IllegalArgumentException("need at least 2 accounts per community and a positive phase");
    }
    int perCommunity = load.accounts() / communities;
    int[][] membersA = members(load.accounts(), id -> id % communities);
    int[][] membersB = members(load.accounts(), id -> Math.min(id / perCommunity, communities - 1));
    int[] communityA = new int[load.accounts()];
    int[] communityB = new int[load.accounts()];
    for (int id = 0; id < load.accounts(); id++) {
      communityA[id] = id % communities;
      communityB[id] = Math.min(id / perCommunity, communities - 1);
    }

    List<Second> seconds = new ArrayList<>();
    AuditReport audit;
    long rebalancedTotal;
    Instant started = Instant.now();
    try (BankBenchCluster bank = BankBenchCluster.start(4,
        () -> new OracleStateMachine(OracleStateMachine.Placement.GRAPH), load.clients(), Client.Mode.DSSMR)) {
      List<Client> cs = bank.clients;
      Client mover = bank.mover;
      bank.createAccounts(load.accounts(), 1_000_000L);
      System.out.printf(Locale.ROOT, "community shift: %d accounts, %d communities, %d clients x %d, %d s per phase%n",
          load.accounts(), communities, load.clients(), load.window(), phase);

      Rebalancer rebalancer = Rebalancer.start(mover, Duration.ofSeconds(1), 64);
      AtomicBoolean phaseB = new AtomicBoolean();
      TransferLoop loop = new TransferLoop(cs, load.accounts(),
          a -> phaseB.get() ? membersB[communityB[a]] : membersA[communityA[a]]);

      ClientStats prev = total(cs);
      long prevDone = 0;
      long prevErrors = 0;
      long prevMoved = 0;
      long t0 = System.nanoTime();
      loop.start(load.outstanding());
      for (int s = 1; s <= 2 * phase; s++) {
        long end = t0 + s * 1_000_000_000L;
        while (System.nanoTime() < end) {
          LockSupport.parkNanos(end - System.nanoTime());
        }
        ClientStats now = total(cs);
        long d = loop.done.get();
        long e = loop.errors.get();
        long m = rebalancer.moved();
        char ph = s <= phase ? 'A' : 'B';
        Second sec = new Second(s, ph, ph == 'A' ? s : s - phase, d - prevDone, e - prevErrors,
            now.commands() - prev.commands(), now.moves() - prev.moves(),
            now.multiPartition() - prev.multiPartition(), now.retries() - prev.retries(), m - prevMoved, m);
        seconds.add(sec);
        System.out.printf(Locale.ROOT, "  %3ds %c%3d  %6d transfers/s  share %6.2f%%  (moves %d, S-SMR %d, retries %d,"
            + " errors %d)  rebalancer +%d = %d%n", s, ph, sec.phaseSecond(), sec.transfers(), 100 * sec.share(),
            sec.moves(), sec.multiPartition(), sec.retries(), sec.errors(), sec.rebalanced(), m);
        prev = now;
        prevDone = d;
        prevErrors = e;
        prevMoved = m;
        if (s == phase) {
          phaseB.set(true);
          System.out.println("  -- communities change: community of account i is now i / " + perCommunity);
        }
      }
      loop.stop(30_000_000_000L);
      rebalancer.close();
      rebalancedTotal = rebalancer.moved();
      audit = cs.get(0).audit().get(60, TimeUnit.SECONDS);
    }

    String md = report(seconds, audit, rebalancedTotal, started, load.accounts(), communities, load.clients(),
        load.window(), phase);
    Files.createDirectories(load.out());
    Files.writeString(load.out().resolve("community-shift.md"), md, StandardCharsets.UTF_8);
    Files.writeString(load.out().resolve("community-shift.csv"), csv(seconds), StandardCharsets.UTF_8);
    System.out.print(md.substring(0, md.indexOf("## Per second")));
    System.exit(0);
  }

  /** The members of every community, by community. */
  static int[][] members(int accounts, IntUnaryOperator community) {
    List<List<Integer>> lists = new ArrayList<>();
    for (int id = 0; id < accounts; id++) {
      int c = community.applyAsInt(id);
      while (lists.size() <= c) {
        lists.add(new ArrayList<>());
      }
      lists.get(c).add(id);
    }
    int[][] m = new int[lists.size()][];
    for (int c = 0; c < m.length; c++) {
      m[c] = lists.get(c).stream().mapToInt(Integer::intValue).toArray();
    }
    return m;
  }

  static ClientStats total(List<Client> cs) {
    long commands = 0;
    long moves = 0;
    long multi = 0;
    long retries = 0;
    for (Client c : cs) {
      ClientStats s = c.stats();
      commands += s.commands();
      moves += s.moves();
      multi += s.multiPartition();
      retries += s.retries();
    }
    return new ClientStats(commands, 0, 0, moves, 0, retries, 0, multi, 0, 0);
  }

  /**
   * The first second of a phase from which {@link #HOLD} consecutive seconds have a share under
   * {@link #TARGET}, or -1.
   */
  static int converged(List<Second> phase) {
    for (int s = 0; s + HOLD <= phase.size(); s++) {
      boolean ok = true;
      for (int k = s; k < s + HOLD && ok; k++) {
        ok = phase.get(k).share() < TARGET;
      }
      if (ok) {
        return phase.get(s).phaseSecond();
      }
    }
    return -1;
  }

  private static String report(List<Second> seconds, AuditReport audit, long rebalancedTotal, Instant started,
      int accounts, int communities, int clients, int window, int phase) {
    StringBuilder md = new StringBuilder(String.format(Locale.ROOT,
        "# Communities that change halfway, learned placement (issue 16)%n%n"
        + "Run %s on %d cores. One embedded cluster (3 nodes, the oracle with `Placement.GRAPH` and 4 partitions),"
        + " the bank with %d accounts created where the oracle put them, a `Rebalancer` (1 s, up to 64 accounts),"
        + " %d DS-SMR clients x %d outstanding transfers. A transfer goes from a random account a to a random other"
        + " account of a's community: phase A (the first %d s) community = id %% %d, phase B (the next %d s)"
        + " community = id / %d. Multi-partition share of a second = (moves + S-SMR executions) / commands issued by"
        + " the clients in that second (`ClientStats`; the rebalancer's own moves are not commands of the workload;"
        + " a second can exceed 100%% when a command is counted in one second and its move in the next)."
        + " A phase has converged at second s when seconds s to s+%d of it all have a share under %.0f%%.%n%n"
        + "Acceptance criterion: multi-partition share back under 2%% within 60 s of the change.%n%n",
        started, Runtime.getRuntime().availableProcessors(), accounts, clients, window, phase, communities, phase,
        accounts / communities, HOLD - 1, 100 * TARGET));
    List<Second> a = seconds.stream().filter(s -> s.phase() == 'A').toList();
    List<Second> b = seconds.stream().filter(s -> s.phase() == 'B').toList();
    int ca = converged(a);
    int cb = converged(b);
    long movedA = a.stream().mapToLong(Second::rebalanced).sum();
    long movedB = b.stream().mapToLong(Second::rebalanced).sum();
    int largest = audit.perPartition().values().stream().mapToInt(Integer::intValue).max().orElse(0);
    md.append("| | phase A (from the initial placement) | phase B (after the change) |\n|---|---|---|\n")
        .append(String.format(Locale.ROOT, "| converged (share < 2%% for %d s) at second | %s | %s |%n", HOLD,
            ca < 0 ? "not within the phase" : Integer.toString(ca), cb < 0 ? "not within the phase" : Integer.toString(cb)))
        .append(String.format(Locale.ROOT, "| multi-partition share, last %d s | %.2f%% | %.2f%% |%n", TAIL,
            100 * tailShare(a), 100 * tailShare(b)))
        .append(String.format(Locale.ROOT, "| transfers/s, last %d s | %.0f | %.0f |%n", TAIL, tailRate(a), tailRate(b)))
        .append(String.format(Locale.ROOT, "| transfers/s, whole phase | %.0f | %.0f |%n",
            a.stream().mapToLong(Second::transfers).sum() / (double) Math.max(1, a.size()),
            b.stream().mapToLong(Second::transfers).sum() / (double) Math.max(1, b.size())))
        .append(String.format(Locale.ROOT, "| accounts moved by the rebalancer | %d | %d |%n", movedA, movedB))
        .append(String.format(Locale.ROOT, "| failed transfers | %d | %d |%n",
            a.stream().mapToLong(Second::errors).sum(), b.stream().mapToLong(Second::errors).sum()))
        .append(String.format(Locale.ROOT, "%nCriterion (phase B back under 2%% within 60 s): **%s**.%n%n",
            cb > 0 && cb <= 60 ? "met (second " + cb + ")" : "not met"))
        .append(String.format(Locale.ROOT, "Final audit (load stopped): %s; %d objects; largest partition holds %.1f%%"
            + " of them %s; the rebalancer moved %d accounts in all.%n%n",
            audit.clean() ? "clean" : "NOT clean (missing " + audit.missing().size() + ", duplicated "
                + audit.duplicated().size() + ", misplaced " + audit.misplaced().size() + ", unknown "
                + audit.unknown().size() + ")",
            audit.objects(), 100.0 * largest / Math.max(1, audit.objects()), audit.perPartition(), rebalancedTotal))
        .append("## Per second\n\n| s | phase | s of phase | transfers/s | share % | moves | S-SMR | retries | failed"
            + " | rebalancer moved (this s) | rebalancer moved (total) |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (Second s : seconds) {
      md.append(String.format(Locale.ROOT, "| %d | %c | %d | %d | %.2f | %d | %d | %d | %d | %d | %d |%n", s.index(),
          s.phase(), s.phaseSecond(), s.transfers(), 100 * s.share(), s.moves(), s.multiPartition(), s.retries(),
          s.errors(), s.rebalanced(), s.rebalancedTotal()));
    }
    return md.toString();
  }

  private static List<Second> tail(List<Second> phase) {
    return phase.subList(Math.max(0, phase.size() - TAIL), phase.size());
  }

  private static double tailShare(List<Second> phase) {
    long commands = 0;
    long multi = 0;
    for (Second s : tail(phase)) {
      commands += s.commands();
      multi += s.moves() + s.multiPartition();
    }
    return commands == 0 ? 0 : multi / (double) commands;
  }

  private static double tailRate(List<Second> phase) {
    List<Second> t = tail(phase);
    return t.stream().mapToLong(Second::transfers).sum() / (double) Math.max(1, t.size());
  }

  private static String csv(List<Second> seconds) {
    StringBuilder csv = new StringBuilder("second,phase,phase_second,transfers,failed,commands,moves,multi_partition,"
        + "retries,share_pct,rebalancer_moved,rebalancer_moved_total\n");
    for (Second s : seconds) {
      csv.append(String.format(Locale.ROOT, "%d,%c,%d,%d,%d,%d,%d,%d,%d,%.3f,%d,%d%n", s.index(), s.phase(),
          s.phaseSecond(), s.transfers(), s.errors(), s.commands(), s.moves(), s.multiPartition(), s.retries(),
          100 * s.share(), s.rebalanced(), s.rebalancedTotal()));
    }
    return csv.toString();
  }
}
