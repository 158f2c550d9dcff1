package io.eyrie.bench;

import io.eyrie.core.AuditReport;
import io.eyrie.core.Client;
import io.eyrie.core.ClientStats;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.PartitionTable;
import io.eyrie.core.Rebalancer;
import io.eyrie.core.Reply;
import io.eyrie.examples.bank.BankOps;
import io.eyrie.multicast.ClusterAdmin;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MulticastClient;
import io.eyrie.oracle.OracleStateMachine;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A partition added under load, then another drained under load (issue 16: "a partition added
 * under load: within 60 s it holds at least half its fair share of objects, no command fails").
 *
 * <p>An embedded cluster (3 nodes, the oracle with {@code Placement.GRAPH}, 3 partitions) runs
 * the bank with N accounts in C communities (community of account i = i % C) and a
 * {@link Rebalancer} (1 s, up to 64 accounts); DS-SMR clients, built on the cluster file, send
 * transfers between two accounts of one community. After {@code --before} seconds, p3 is added:
 * a new Raft group on the running nodes ({@link ClusterAdmin#addGroup}) made active in the
 * oracle's table ({@link Client#addPartition}); the clients learn it when a prophecy names it.
 * After {@code --after} more seconds p0 is drained ({@link Client#drain}). Every second it
 * records the transfers, failures, multi-partition share and each partition's objects.
 *
 * <pre>
 * bin/bench elastic [--before 40s] [--after 60s] [--accounts 400] [--communities 16] [--clients 8]
 *     [--window 16] [--out bench/results/issue16]
 * </pre>
 */
public final class ElasticBenchmark {
  private static final GroupId P0 = GroupId.valueOf("p0");
  private static final GroupId P3 = GroupId.valueOf("p3");

  private ElasticBenchmark() {}

  /** One second of the run. */
  record Second(int index, String phase, long transfers, long errors, double share, PartitionTable table) {}

  /**
   * Entry point.
   *
   * @param args {@code --name value} options, see the class comment
   * @throws Exception if the cluster fails
   */
  public static void main(String[] args) throws Exception {
    BenchArgs o = BenchArgs.parse(args);
    BankLoad load = BankLoad.of(o, 400);
    int before = o.integer("before", 40);
    int after = o.integer("after", 60);
    int communities = o.integer("communities", 16);
    int[][] members = CommunityShiftBenchmark.members(load.accounts(), id -> id % communities);

    List<Second> seconds = new ArrayList<>();
    Instant started = Instant.now();
    StringBuilder events = new StringBuilder();
    AuditReport audit;
    long total;
    try (BankBenchCluster bank = BankBenchCluster.start(3,
            () -> new OracleStateMachine(OracleStateMachine.Placement.GRAPH), load.clients(), Client.Mode.DSSMR);
        MulticastClient admin = bank.cluster.newClient()) {
      EmbeddedCluster cluster = bank.cluster;
      List<Client> cs = bank.clients;
      Client mover = bank.mover;
      TreeSet<ObjId> all = new TreeSet<>();
      for (int i = 0; i < load.accounts(); i++) {
        all.add(ObjId.valueOf(i));
      }
      bank.createAccounts(load.accounts(), 1_000_000L);
      System.out.printf(Locale.ROOT, "elastic: %d accounts, %d communities, %d clients x %d; add p3 at %d s,"
          + " drain p0 %d s later%n", load.accounts(), communities, load.clients(), load.window(), before, after);

      Rebalancer rebalancer = Rebalancer.start(mover, Duration.ofSeconds(1), 64);
      TransferLoop loop = new TransferLoop(cs, load.accounts(), a -> members[a % communities]);

      ClientStats prev = CommunityShiftBenchmark.total(cs);
      long prevDone = 0;
      long prevErrors = 0;
      long t0 = System.nanoTime();
      loop.start(load.outstanding());
      CompletableFuture<Void> adding = null;
      CompletableFuture<PartitionTable> draining = null;
      long addStart = 0;
      long drainStart = 0;
      int drainedAt = -1;
      String phase = "before";
      for (int s = 1; ; s++) {
        long end = t0 + s * 1_000_000_000L;
        while (System.nanoTime() < end) {
          LockSupport.parkNanos(end - System.nanoTime());
        }
        ClientStats now = CommunityShiftBenchmark.total(cs);
        long d = loop.done.get();
        long e = loop.errors.get();
        long commands = now.commands() - prev.commands();
        double share = commands == 0 ? 0
            : (now.moves() - prev.moves() + now.multiPartition() - prev.multiPartition()) / (double) commands;
        PartitionTable table = mover.partitionTable().get(30, TimeUnit.SECONDS);
        Second sec = new Second(s, phase, d - prevDone, e - prevErrors, share, table);
        seconds.add(sec);
        System.out.printf(Locale.ROOT, "  %3ds %-7s %6d transfers/s  share %6.2f%%  failed %d  %s%n", s, phase,
            sec.transfers(), 100 * share, sec.errors(), counts(table));
        prev = now;
        prevDone = d;
        prevErrors = e;
        if (s == before) {
          phase = "added";
          addStart = System.nanoTime();
          long a0 = addStart;
          adding = CompletableFuture.runAsync(() -> {
            try {
              ClusterAdmin.addGroup(admin, P3, List.of(1, 2, 3), Duration.ofSeconds(60));
              mover.addPartition(P3).get(60, TimeUnit.SECONDS);
              events.append(String.format(Locale.ROOT, "- p3 added and active %.1f s after the request%n",
                  (System.nanoTime() - a0) / 1e9));
            } catch (Exception ex) {
              throw new IllegalStateException("adding p3 failed", ex);
            }
          });
        }
        if (s == before + after) {
          adding.get(60, TimeUnit.SECONDS);
          phase = "drain";
          drainStart = System.nanoTime();
          draining = mover.drain(P0, 64, Duration.ofSeconds(300));
        }
        if (draining != null && draining.isDone() && drainedAt < 0) {
          draining.get();
          drainedAt = s;
          phase = "drained";
          events.append(String.format(Locale.ROOT, "- p0 drained %.1f s after the drain began%n",
              (System.nanoTime() - drainStart) / 1e9));
        }
        if (drainedAt > 0 && s >= drainedAt + 10 || s > before + after + 300) {
          break;
        }
      }
      loop.stop(30_000_000_000L);
      rebalancer.close();
      audit = mover.audit().get(60, TimeUnit.SECONDS);
      Reply read = mover.sendAccess(Command.access(new BankOps.Read(), all)).get(120, TimeUnit.SECONDS);
      total = 0;
      for (long b : (long[]) read.value()) {
        total += b;
      }
      if (loop.firstError.get() != null) {
        events.append("- first failure: ").append(loop.firstError.get()).append('\n');
      }
    }
    String md = report(seconds, events.toString(), audit, total == load.accounts() * 1_000_000L, started,
        load.accounts(), communities, load.clients(), load.window(), before, after);
    Files.createDirectories(load.out());
    Files.writeString(load.out().resolve("elastic.md"), md, StandardCharsets.UTF_8);
    System.out.print(md.substring(0, md.indexOf("## Per second")));
    System.exit(0);
  }

  private static String counts(PartitionTable t) {
    StringBuilder b = new StringBuilder();
    t.states().forEach((g, st) -> b.append(g.name()).append('=').append(t.objectsAt(g))
        .append(st == PartitionTable.State.RETIRED ? "(retired) " : " "));
    return b.toString().trim();
  }

  private static String report(List<Second> seconds, String events, AuditReport audit, boolean conserved,
      Instant started, int accounts, int communities, int clients, int window, int before, int after) {
    int fair = accounts / 4;
    int halfAt = -1;
    for (Second s : seconds) {
      if (s.index() > before && s.table().objectsAt(P3) >= fair / 2.0) {
        halfAt = s.index() - before;
        break;
      }
    }
    Second at60 = seconds.stream().filter(s -> s.index() == before + Math.min(60, after)).findFirst().orElse(null);
    long failed = seconds.stream().mapToLong(Second::errors).sum();
    StringBuilder md = new StringBuilder(String.format(Locale.ROOT,
        "# A partition added, then another drained, under load (issue 16)%n%n"
        + "Run %s on %d cores. One embedded cluster (3 nodes, the oracle with `Placement.GRAPH`, 3 partitions),"
        + " the bank with %d accounts in %d communities (community = id %% %d), a `Rebalancer` (1 s, up to 64"
        + " accounts), %d DS-SMR clients x %d outstanding transfers within a community, built on the cluster file."
        + " At second %d p3 is added (`ClusterAdmin.addGroup` on the 3 running nodes, then `Client.addPartition`);"
        + " at second %d p0 is drained (`Client.drain`, 64 accounts per round). Share = (moves + S-SMR executions)"
        + " / commands of the clients in that second.%n%n"
        + "Acceptance criterion: within 60 s of the addition p3 holds at least half its fair share (%d of %d"
        + " accounts / 4 partitions), and no command fails.%n%n",
        started, Runtime.getRuntime().availableProcessors(), accounts, communities, communities, clients, window,
        before, before + after, fair / 2, accounts));
    md.append(events).append('\n');
    md.append(String.format(Locale.ROOT, "| | |%n|---|---|%n"
        + "| p3 reached half its fair share (%d accounts) after | %s |%n"
        + "| p3's accounts 60 s after the addition | %s |%n"
        + "| failed transfers (whole run) | %d |%n"
        + "| transfers/s, last 10 s before the addition | %.0f |%n"
        + "| transfers/s, seconds 50-60 after the addition | %.0f |%n"
        + "| transfers/s, last 10 s (after the drain) | %.0f |%n"
        + "| final audit | %s, per partition %s |%n"
        + "| total balance conserved | %s |%n",
        fair / 2, halfAt < 0 ? "not within the run" : halfAt + " s", at60 == null ? "-" : Long.toString(at60.table()
            .objectsAt(P3)), failed, rate(seconds, before - 9, before), rate(seconds, before + 51, before + 60),
        rate(seconds, seconds.size() - 9, seconds.size()), audit.clean() ? "clean" : "NOT clean", audit.perPartition(),
        conserved ? "yes" : "NO"));
    md.append(String.format(Locale.ROOT, "%nCriterion: **%s**.%n%n", halfAt >= 0 && halfAt <= 60 && failed == 0
        ? "met" : "not met"));
    md.append("## Per second\n\n| s | phase | transfers/s | failed | share % | objects per partition |\n"
        + "|---|---|---|---|---|---|\n");
    for (Second s : seconds) {
      md.append(String.format(Locale.ROOT, "| %d | %s | %d | %d | %.2f | %s |%n", s.index(), s.phase(), s.transfers(),
          s.errors(), 100 * s.share(), counts(s.table())));
    }
    return md.toString();
  }

  private static double rate(List<Second> seconds, int from, int to) {
    long sum = 0;
    int n = 0;
    for (Second s : seconds) {
      if (s.index() >= from && s.index() <= to) {
        sum += s.transfers();
        n++;
      }
    }
    return n == 0 ? 0 : sum / (double) n;
  }
}
