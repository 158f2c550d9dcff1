package io.eyrie.bench;

import io.eyrie.chirper.ChirperClient;
import io.eyrie.chirper.ChirperService;
import io.eyrie.chirper.LoadRunner;
import io.eyrie.chirper.OpGenerator;
import io.eyrie.chirper.ProgressLine;
import io.eyrie.chirper.SocialGraph;
import io.eyrie.chirper.Workload;
import io.eyrie.core.Client;
import io.eyrie.core.ClientStats;
import io.eyrie.core.Rebalancer;
import io.eyrie.core.Service;
import io.eyrie.multicast.EmbeddedCluster;
import java.io.OutputStream;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One running cell of Table 1: a fresh embedded cluster (3 nodes; the oracle and P partitions)
 * in one mode, seeded with the social graph, with its clients; warmed up once, then measured in
 * one or more windows. Several cells may run at once so that their windows can be interleaved
 * ({@code bin/bench table1 --interleave K}); a cell that is not being measured is idle.
 */
final class Table1Cell implements AutoCloseable {
  private final Table1.Options o;
  private final int partitions;
  private final Workload workload;
  private final String mode;
  private final SocialGraph graph;
  private final Service service;
  private final EmbeddedCluster cluster;
  private final List<ChirperClient> clients = new ArrayList<>();
  private Client mover;
  private Rebalancer rebalancer;
  private final List<LoadRunner.Sample> samples = new ArrayList<>();
  private int seconds;

  private Table1Cell(Table1.Options o, int partitions, Workload workload, String mode) throws Exception {
    this.o = o;
    this.partitions = partitions;
    this.workload = workload;
    this.mode = mode;
    this.graph = SocialGraph.generate(o.seed(), new SocialGraph.Params(o.users(),
        Math.min(o.users(), o.communities()), o.follows(), 1.0, o.inCommunity()));
    this.service = mode.equals("graph") ? ChirperService.withLearnedPlacement() : new ChirperService().get();
    this.cluster = EmbeddedCluster.newBuilder().nodes(3).partitions(partitions).oracle(true).app(service).start();
  }

  /** Starts the cluster and its clients and seeds the graph. */
  static Table1Cell start(Table1.Options o, int partitions, Workload w, String mode) throws Exception {
    Table1Cell c = new Table1Cell(o, partitions, w, mode);
    try {
      c.setUp();
      return c;
    } catch (Exception | Error e) {
      c.close();
      throw e;
    }
  }

  private void setUp() throws Exception {
    cluster.awaitLeaders(Duration.ofSeconds(60));
    Client.Mode m = mode.equals("ssmr") ? Client.Mode.SSMR : Client.Mode.DSSMR;
    for (int i = 0; i < o.clients(); i++) {
      clients.add(new ChirperClient(Client.newBuilder().cluster(cluster.cluster()).service(service)
          .mode(m).totalTimeoutMs(30_000).build()));
    }
    Table1Seed.seed(graph, clients.get(0).proxy(), partitions);
    if (mode.equals("graph")) {
      // The learned placement's background rebalancer, on a client of its own (64 objects a second).
      mover = Client.newBuilder().cluster(cluster.cluster()).service(service)
          .mode(Client.Mode.DSSMR).totalTimeoutMs(30_000).build();
      rebalancer = Rebalancer.start(mover, Duration.ofSeconds(1), 64);
    }
  }

  String mode() {
    return mode;
  }

  /** Runs the workload's warm-up (its samples are kept for the cell's time series). */
  void warm() throws Exception {
    int warm = workload == Workload.POST ? o.postWarmup() : workload == Workload.FOLLOW ? o.followWarmup() : o.warmup();
    if (warm > 0) {
      LoadRunner.Result wr = runner(warm, o.seed()).run();
      addSamples(wr);
    }
  }

  /** Measures one window of {@code o.duration()} seconds with the given seed. */
  Table1.Cell measure(long seed) throws Exception {
    Map<String, Long> before = MulticastBenchmark.traffic(cluster);
    long cpu0 = MulticastBenchmark.processCpuNanos();
    LoadRunner.Result r = runner(o.duration(), seed).run();
    Map<String, Long> after = MulticastBenchmark.traffic(cluster);
    long cpu = MulticastBenchmark.processCpuNanos() - cpu0;
    addSamples(r);
    double cmds = Math.max(1, r.completedInWindow());
    double[] q = r.latencies().quantilesMs(0, 0.5, 0.99);
    ClientStats st = r.stats();
    double secs = r.window().toNanos() / 1e9;
    io.eyrie.core.AuditReport audit = clients.get(0).proxy().audit().get(60, TimeUnit.SECONDS);
    double largest = 0;
    for (int count : audit.perPartition().values()) {
      largest = Math.max(largest, count / (double) Math.max(1, audit.objects()));
    }
    return new Table1.Cell(workload.name().toLowerCase(Locale.ROOT), partitions, mode,
        r.throughput(), q[0], q[1], r.completedInWindow(), r.timeouts(), st.moves() / secs,
        Table1.multiShare(st.moves() + st.multiPartition(), st.commands()),
        (after.get("entries") - before.get("entries")) / cmds,
        (after.get("batches") - before.get("batches")) / cmds, (after.get("items") - before.get("items")) / cmds,
        (after.get("bytes") - before.get("bytes")) / cmds, cpu0 < 0 ? Double.NaN : cpu / 1e6 / cmds,
        List.copyOf(samples), largest, (after.get("log") - before.get("log")) / cmds);
  }

  private LoadRunner runner(int secs, long seed) {
    ProgressLine quiet = new ProgressLine(new PrintStream(OutputStream.nullOutputStream()), false, 1);
    return new LoadRunner(clients, new OpGenerator(workload, graph),
        new LoadRunner.Config(Duration.ofSeconds(secs), o.window(), Duration.ofSeconds(31), seed)).onSecond(quiet);
  }

  private void addSamples(LoadRunner.Result r) {
    int offset = seconds;
    for (LoadRunner.Sample s : r.samples()) {
      samples.add(new LoadRunner.Sample(s.second() + offset, s.commands(), s.moves(), s.retries(), s.fallbacks(),
          s.failures(), s.directShare(), s.p50Ms(), s.p99Ms()));
      seconds = Math.max(seconds, s.second() + offset);
    }
  }

  /**
   * One cell from several measured windows of the same cell: throughput and the per-command costs
   * are the means over the windows, latencies the medians of the windows' percentiles, counts
   * their sums; the samples (warm-up and every window of the cell, in order) and the largest share
   * are the last window's view.
   */
  static Table1.Cell combine(List<Table1.Cell> windows) {
    if (windows.size() == 1) {
      return windows.get(0);
    }
    Table1.Cell last = windows.get(windows.size() - 1);
    return new Table1.Cell(last.workload(), last.partitions(), last.mode(),
        mean(windows, Table1.Cell::tput), median(windows, Table1.Cell::p50), median(windows, Table1.Cell::p99),
        windows.stream().mapToLong(Table1.Cell::completed).sum(), windows.stream().mapToLong(Table1.Cell::timeouts).sum(),
        mean(windows, Table1.Cell::movesPerSec), mean(windows, Table1.Cell::multiShare),
        mean(windows, Table1.Cell::startEntries), mean(windows, Table1.Cell::channelBatches),
        mean(windows, Table1.Cell::channelItems), mean(windows, Table1.Cell::channelBytes),
        mean(windows, Table1.Cell::cpuMsPerCmd), last.samples(), last.largestShare(),
        mean(windows, Table1.Cell::logEntries));
  }

  private static double mean(List<Table1.Cell> cs, java.util.function.ToDoubleFunction<Table1.Cell> f) {
    return cs.stream().mapToDouble(f).average().orElse(Double.NaN);
  }

  static double median(List<Table1.Cell> cs, java.util.function.ToDoubleFunction<Table1.Cell> f) {
    double[] v = cs.stream().mapToDouble(f).sorted().toArray();
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }

  @Override
  public void close() {
    if (rebalancer != null) {
      rebalancer.close();
    }
    if (mover != null) {
      mover.close();
    }
    clients.forEach(ChirperClient::close);
    cluster.close();
  }
}
