package io.eyrie.core.internal;

import io.eyrie.core.AuditReport;
import io.eyrie.core.Client;
import io.eyrie.core.ObjId;
import io.eyrie.core.PartitionStats;
import io.eyrie.core.PartitionTable;
import io.eyrie.core.protocol.Observed;
import io.eyrie.core.protocol.OracleMapReply;
import io.eyrie.core.protocol.PartitionChange;
import io.eyrie.core.protocol.PartitionStatsReply;
import io.eyrie.core.protocol.PartitionTableReq;
import io.eyrie.core.protocol.PlanMoves;
import io.eyrie.core.protocol.PlanReq;
import io.eyrie.core.protocol.SamplesReq;
import io.eyrie.core.protocol.StatsReq;
import io.eyrie.multicast.GroupId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Owns a {@link Client}'s partition administration and operations: the oracle's partition table
 * (adding, retiring and draining partitions), moving objects toward the oracle's learned
 * placement, and reading counters, locations and audits. {@link Client}'s methods of the same
 * names delegate here and document the behaviour.
 */
public final class PartitionOps {
  private final ProxyTransport net;
  private final GroupId oracle;
  private final ClientProxy proxy;
  private final LocationCache cache;
  private final ScheduledExecutorService timer;

  /**
   * Creates the operations of one client.
   *
   * @param net how they reach the cluster
   * @param oracle the oracle's group
   * @param proxy the client's proxy, which moves objects
   * @param cache the client's location cache, which forgets what the rebalancer moves
   * @param timer where pauses between drain rounds run (owned by the caller)
   */
  public PartitionOps(ProxyTransport net, GroupId oracle, ClientProxy proxy, LocationCache cache,
      ScheduledExecutorService timer) {
    this.net = net;
    this.oracle = oracle;
    this.proxy = proxy;
    this.cache = cache;
    this.timer = timer;
  }

  /** See {@link Client#partitionTable()}. */
  public CompletableFuture<PartitionTable> partitionTable() {
    return net.query(oracle, new PartitionTableReq()).thenApply(o -> (PartitionTable) o);
  }

  /**
   * Activates or retires a partition (see {@link Client#addPartition}, {@link Client#retirePartition}).
   *
   * @param partition the partition
   * @param active whether it becomes active
   * @return the new table
   */
  public CompletableFuture<PartitionTable> changePartition(GroupId partition, boolean active) {
    Objects.requireNonNull(partition, "partition");
    return changePartition(partition, active, 3);
  }

  /**
   * Sends a partition change to the oracle and every partition this client knows (each learns
   * the table it leaves); if the oracle's table holds a partition this client has not learned,
   * learns the cluster again and resends.
   */
  private CompletableFuture<PartitionTable> changePartition(GroupId partition, boolean active, int tries) {
    TreeSet<GroupId> dests = new TreeSet<>(net.partitions());
    dests.add(oracle);
    dests.add(partition);
    return net.multicast(dests, oracle, new PartitionChange(partition, active))
        .thenApply(o -> (PartitionTable) o)
        .exceptionallyCompose(e -> {
          Throwable c = ClientProxy.unwrap(e);
          if (tries > 1 && String.valueOf(c.getMessage()).contains("learn the cluster again")) {
            return net.refreshView().handle((v, x) -> v).thenCompose(v -> changePartition(partition, active, tries - 1));
          }
          return CompletableFuture.failedFuture(c);
        });
  }

  /** See {@link Client#drain}. */
  public CompletableFuture<PartitionTable> drain(GroupId partition, int batch, Duration timeout) {
    if (batch <= 0) {
      throw new IllegalArgumentException("batch must be positive: " + batch);
    }
    long deadline = System.nanoTime() + timeout.toNanos();
    return changePartition(partition, false).thenCompose(t -> drainRound(partition, batch, deadline, t));
  }

  private CompletableFuture<PartitionTable> drainRound(GroupId partition, int batch, long deadline, PartitionTable t) {
    if (t.drained(partition)) {
      return CompletableFuture.completedFuture(t);
    }
    if (System.nanoTime() - deadline > 0) {
      return CompletableFuture.failedFuture(new TimeoutException(
          "partition " + partition + " still holds " + t.objectsAt(partition) + " objects"));
    }
    // A round that moves nothing (its objects wait for a create or delete) pauses a little.
    return rebalance(batch).thenCompose(n -> n > 0 ? CompletableFuture.completedFuture(n) : delay(100))
        .handle((n, e) -> null)
        .thenCompose(x -> partitionTable())
        .thenCompose(next -> drainRound(partition, batch, deadline, next));
  }

  private CompletableFuture<Integer> delay(long ms) {
    CompletableFuture<Integer> f = new CompletableFuture<>();
    timer.schedule(() -> f.complete(0), ms, TimeUnit.MILLISECONDS);
    return f;
  }

  /** See {@link Client#partitionStats}. */
  public CompletableFuture<PartitionStats> partitionStats(GroupId partition) {
    return net.query(partition, new StatsReq(false)).thenApply(o -> {
      PartitionStatsReply r = (PartitionStatsReply) o;
      return new PartitionStats(r.objects(), r.executed(), r.multiPartition(), r.retries());
    });
  }

  /** See {@link Client#locationOf}. */
  public CompletableFuture<GroupId> locationOf(ObjId id) {
    return net.query(oracle, new StatsReq(true)).thenApply(m -> ((OracleMapReply) m).locations().get(id));
  }

  /**
   * Hands the oracle what each partition sampled of its single-partition commands (see
   * {@link SamplesReq}); a partition that does not answer is skipped this round.
   */
  private CompletableFuture<Void> observeSamples() {
    List<CompletableFuture<Void>> all = new ArrayList<>();
    for (GroupId p : net.partitions()) {
      all.add(net.query(p, new SamplesReq()).thenCompose(o -> {
        Observed s = (Observed) o;
        return s.accesses().isEmpty() ? CompletableFuture.completedFuture(null)
            : net.query(oracle, s).thenApply(x -> (Void) null);
      }).exceptionally(e -> null));
    }
    return CompletableFuture.allOf(all.toArray(new CompletableFuture[0]));
  }

  /** See {@link Client#rebalance}. */
  public CompletableFuture<Integer> rebalance(int max) {
    return observeSamples().thenCompose(v -> net.query(oracle, new PlanReq(max))).thenCompose(o -> {
      PlanMoves plan = (PlanMoves) o;
      TreeMap<List<GroupId>, List<ObjId>> byPair = new TreeMap<>(
          Comparator.<List<GroupId>, GroupId>comparing(l -> l.get(0)).thenComparing(l -> l.get(1)));
      plan.from().forEach((id, src) -> {
        GroupId dst = plan.to().get(id);
        if (dst != null && !dst.equals(src)) {
          byPair.computeIfAbsent(List.of(src, dst), k -> new ArrayList<>()).add(id);
        }
      });
      List<CompletableFuture<Void>> sent = new ArrayList<>();
      int[] count = new int[1];
      byPair.forEach((pair, ids) -> {
        count[0] += ids.size();
        sent.add(moveInPieces(ids, pair.get(0), pair.get(1)));
        cache.remove(ids);
      });
      return CompletableFuture.allOf(sent.toArray(new CompletableFuture[0])).thenApply(v -> count[0]);
    });
  }

  /**
   * Moves objects from one partition to another; if their values together are more than one
   * channel item carries, moves each half alone (an object alone always fits: a partition keeps
   * none larger), so that a drain or a plan never stalls on a batch of large objects. Any other
   * failure ends the round: the next plan asks again.
   */
  private CompletableFuture<Void> moveInPieces(List<ObjId> ids, GroupId src, GroupId dst) {
    return proxy.move(ids, src, dst).handle((r, e) -> {
      Throwable c = ClientProxy.unwrap(e);
      if (c != null && ids.size() > 1 && String.valueOf(c.getMessage()).contains("larger than a channel takes")) {
        int h = ids.size() / 2;
        return moveInPieces(ids.subList(0, h), src, dst).thenCompose(x -> moveInPieces(ids.subList(h, ids.size()), src, dst));
      }
      return CompletableFuture.<Void>completedFuture(null);
    }).thenCompose(f -> f);
  }

  /** How many times an audit looks before it reports a discrepancy (see {@link #audit}). */
  static final int AUDIT_PASSES = 4;
  /** The pause between two looks of an audit. */
  static final long AUDIT_PAUSE_MS = 250;

  /**
   * See {@link Client#audit}. The map and the partitions are read at slightly different times,
   * and a command acknowledged by one destination may still be finishing at another (an S-SMR
   * create is answered by the first partition while the oracle's verdict is on its way to the
   * one that makes the object). So a report that is not clean is taken again, up to
   * {@link #AUDIT_PASSES} looks {@link #AUDIT_PAUSE_MS} apart, and only what every look found
   * wrong, in the same way, is reported: a lasting discrepancy is in every look.
   */
  public CompletableFuture<AuditReport> audit() {
    return net.refreshView().handle((v, e) -> v).thenCompose(v -> auditKnown()).thenCompose(r -> lookAgain(r, 1));
  }

  private CompletableFuture<AuditReport> lookAgain(AuditReport found, int looks) {
    if (found.clean() || looks >= AUDIT_PASSES) {
      return CompletableFuture.completedFuture(found);
    }
    java.util.concurrent.Executor later = CompletableFuture.delayedExecutor(AUDIT_PAUSE_MS, TimeUnit.MILLISECONDS, timer);
    return CompletableFuture.supplyAsync(() -> null, later).thenCompose(x -> auditKnown())
        .thenCompose(r -> lookAgain(inBoth(found, r), looks + 1));
  }

  /** The later report, with only the discrepancies the earlier one also found. */
  static AuditReport inBoth(AuditReport earlier, AuditReport later) {
    return new AuditReport(later.objects(), common(earlier.missing(), later.missing()),
        common(earlier.duplicated(), later.duplicated()), common(earlier.misplaced(), later.misplaced()),
        common(earlier.unknown(), later.unknown()), later.perPartition());
  }

  private static List<ObjId> common(List<ObjId> a, List<ObjId> b) {
    List<ObjId> out = new ArrayList<>(b);
    out.retainAll(new TreeSet<>(a));
    return out;
  }

  private CompletableFuture<AuditReport> auditKnown() {
    CompletableFuture<Object> map = net.query(oracle, new StatsReq(true));
    List<CompletableFuture<Object>> held = new ArrayList<>();
    List<GroupId> partitions = net.partitions();
    for (GroupId g : partitions) {
      held.add(net.query(g, new StatsReq(true)));
    }
    return CompletableFuture.allOf(held.toArray(new CompletableFuture[0])).thenCombine(map, (v, m) -> {
      TreeMap<ObjId, GroupId> where = ((OracleMapReply) m).locations();
      TreeMap<ObjId, List<GroupId>> holders = new TreeMap<>();
      Map<String, Integer> per = new TreeMap<>();
      for (int i = 0; i < partitions.size(); i++) {
        long[] ids = ((PartitionStatsReply) held.get(i).join()).objectIds();
        per.put(partitions.get(i).name(), ids.length);
        for (long id : ids) {
          holders.computeIfAbsent(ObjId.valueOf(id), k -> new ArrayList<>()).add(partitions.get(i));
        }
      }
      List<ObjId> missing = new ArrayList<>();
      List<ObjId> duplicated = new ArrayList<>();
      List<ObjId> misplaced = new ArrayList<>();
      List<ObjId> unknown = new ArrayList<>();
      where.forEach((id, g) -> {
        List<GroupId> h = holders.get(id);
        if (h == null) {
          missing.add(id);
        } else if (!h.contains(g)) {
          misplaced.add(id);
        }
      });
      holders.forEach((id, h) -> {
        if (h.size() > 1) {
          duplicated.add(id);
        }
        if (!where.containsKey(id)) {
          unknown.add(id);
        }
      });
      return new AuditReport(where.size(), missing, duplicated, misplaced, unknown, per);
    });
  }
}
