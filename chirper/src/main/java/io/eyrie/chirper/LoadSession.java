package io.eyrie.chirper;

import io.eyrie.core.Client;
import io.eyrie.core.Service;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.MulticastClient;
import io.eyrie.tools.Args;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * What the demo and the load generator share: generate the social graph, load it into the
 * cluster, run a workload with a progress line, print the summary, and write the chart.
 */
final class LoadSession {

  /**
   * Setup commands outstanding at once. Moves make setup commands slow (tens per second on two
   * cores), so a deeper pipeline only adds queueing delay, up to the client's timeout.
   */
  private static final int SETUP_IN_FLIGHT = 64;

  /** The options both subcommands accept. */
  static final Set<String> OPTIONS = Set.of("workload", "mode", "users", "follows", "communities", "clients",
      "window", "duration", "seed", "timeout", "out");

  /** {@link #OPTIONS} and a command's own valued options. */
  static Set<String> optionsWith(String... more) {
    Set<String> s = new java.util.HashSet<>(OPTIONS);
    s.addAll(java.util.List.of(more));
    return s;
  }

  /** Their usage lines. */
  static final String USAGE = """
        --workload W     timeline | post | follow | mix (default mix: 85% timeline, 7.5% post,
                         3.75% follow, 3.75% unfollow)
        --mode M         dssmr (move objects together) | ssmr (static placement, the baseline);
                         default dssmr
        --users N        users in the social graph (default: demo 200, load 1000)
        --follows N      follows per user in the graph (default: demo 5, load 10)
        --communities N  interest communities (default twice the partitions)
        --clients N      client proxies, each a closed loop (default 4)
        --window N       commands outstanding per client (default 16)
        --duration D     load time: 30, 30s, 2m, 500ms (default: demo 20s, load 30s)
        --seed N         seed of the graph and the command choices (default 42)
        --timeout D      a command without an answer after this is reported as a timeout
                         (outcome unknown; default 30s)
      """;

  /**
   * Load options.
   *
   * @param mode DS-SMR or S-SMR
   * @param workload the command mix
   * @param users users in the graph
   * @param follows follows per user
   * @param communities interest communities
   * @param clients client proxies
   * @param window commands outstanding per proxy
   * @param duration load window
   * @param seed graph and command seed
   * @param timeout per-command timeout
   * @param setup whether to load the graph first
   */
  record Options(Client.Mode mode, Workload workload, int users, int follows, int communities, int clients,
      int window, Duration duration, long seed, Duration timeout, boolean setup) {

    String modeLabel() {
      return mode.name().toLowerCase(Locale.ROOT);
    }
  }

  /**
   * What a session produced.
   *
   * @param setup what the graph setup did, or null if it was skipped
   * @param result the load's outcome
   * @param setting the run's description
   */
  record Report(GraphSetup.Outcome setup, LoadRunner.Result result, Summary.Setting setting) {}

  private LoadSession() {}

  static Options options(Args a, int partitions, int defaultUsers, int defaultFollows, Duration defaultDuration)
      throws Args.UsageException {
    int users = a.integer("users", defaultUsers, 2, 10_000_000);
    int communities = a.integer("communities", Math.min(users, 2 * Math.max(1, partitions)), 1, users);
    return new Options(mode(a, Client.Mode.DSSMR), workload(a, Workload.MIX), users, a.integer("follows", defaultFollows, 0, 1000),
        communities, a.integer("clients", 4, 1, 1024), a.integer("window", 16, 1, 100_000),
        a.duration("duration", defaultDuration, Duration.ofSeconds(1)), a.longValue("seed", 42),
        a.duration("timeout", Duration.ofSeconds(30), Duration.ofMillis(100)), !a.flag("no-setup"));
  }

  /**
   * Loads the graph (unless told not to) and runs the workload.
   *
   * @param cluster the cluster
   * @param o the options
   * @param out where progress goes
   * @param tty whether to rewrite the progress line in place
   * @param resends told about every resend of the clients' multicasts, or null
   * @return the report
   * @throws Exception if the setup fails
   */
  static Report run(ClusterConfig cluster, Options o, PrintStream out, boolean tty, MulticastClient.ResendListener resends)
      throws Exception {
    return run(cluster, o, out, tty, resends, null);
  }

  /**
   * Loads the graph (unless told not to) and runs the workload, the clients connecting with
   * mutual TLS as {@code tls}'s identity if it is not null.
   *
   * @param cluster the cluster
   * @param o the options
   * @param out where progress goes
   * @param tty whether to rewrite the progress line in place
   * @param resends told about every resend of the clients' multicasts, or null
   * @param tls the clients' certificate, or null for plaintext
   * @return the report
   * @throws Exception if the setup fails
   */
  static Report run(ClusterConfig cluster, Options o, PrintStream out, boolean tty, MulticastClient.ResendListener resends,
      io.eyrie.multicast.TlsConfig tls) throws Exception {
    SocialGraph graph = SocialGraph.generate(o.seed(), new SocialGraph.Params(o.users(), o.communities(),
        o.follows(), 1.0, 0.9));
    List<ChirperClient> clients = new ArrayList<>();
    Service chirper = new ChirperService().get();
    try {
      for (int i = 0; i < o.clients(); i++) {
        clients.add(new ChirperClient(Client.newBuilder().cluster(cluster).service(chirper)
            .mode(o.mode()).totalTimeoutMs(o.timeout().toMillis()).resendListener(resends).tls(tls).build()));
      }
      GraphSetup.Outcome setup = null;
      if (o.setup()) {
        out.printf(Locale.ROOT, "setup: %d users in %d communities, %d follows ...%n", o.users(), o.communities(),
            graph.follows().size());
        setup = new GraphSetup(clients, SETUP_IN_FLIGHT, Duration.ofMinutes(10)).progressTo(out).run(graph);
        out.printf(Locale.ROOT, "setup: done in %.1f s (%d users created, %d existed; %d follows; %d moves;"
            + " %d timed out and sent again)%n", setup.took().toMillis() / 1000.0, setup.created(), setup.existed(),
            setup.follows(), setup.stats().moves(), setup.timeouts());
      }
      int seconds = (int) ((o.duration().toMillis() + 999) / 1000);
      out.printf(Locale.ROOT, "load: %s workload, %s, %d clients x window %d, %d s%n", o.workload().label(),
          o.modeLabel(), o.clients(), o.window(), seconds);
      ProgressLine progress = new ProgressLine(out, tty, seconds);
      LoadRunner.Result r;
      try {
        r = new LoadRunner(clients, new OpGenerator(o.workload(), graph),
            new LoadRunner.Config(o.duration(), o.window(), o.timeout().plusSeconds(1), o.seed()))
            .onSecond(progress).run();
      } finally {
        progress.finish();
      }
      Summary.Setting setting = new Summary.Setting(o.modeLabel(), o.workload(), cluster.partitions().size(),
          o.users(), o.clients(), o.window());
      return new Report(setup, r, setting);
    } finally {
      clients.forEach(ChirperClient::close);
    }
  }

  /**
   * Prints the summary and writes the chart and the time series into a directory.
   *
   * @param r the report
   * @param dir the output directory, or null for no files
   * @param name the files' base name
   * @param out where the summary goes
   * @throws IOException if a file cannot be written
   */
  static void report(Report r, Path dir, String name, PrintStream out) throws IOException {
    Summary.print(out, r.setting(), r.result());
    if (dir == null) {
      return;
    }
    Files.createDirectories(dir);
    Path png = dir.resolve(name + ".png").toAbsolutePath().normalize();
    Summary.Setting s = r.setting();
    Chart.write(png, String.format(Locale.ROOT, "Chirper %s, %s workload: %d partitions, %d users, %d clients x %d",
        s.mode(), s.workload().label(), s.partitions(), s.users(), s.clients(), s.window()), r.result().samples());
    Path csv = dir.resolve(name + ".csv").toAbsolutePath().normalize();
    StringBuilder sb = new StringBuilder("second,commands,moves,retries,fallbacks,failures,direct_share,p50_ms,p99_ms\n");
    for (LoadRunner.Sample x : r.result().samples()) {
      sb.append(String.format(Locale.ROOT, "%d,%d,%d,%d,%d,%d,%.4f,%.3f,%.3f%n", x.second(), x.commands(), x.moves(),
          x.retries(), x.fallbacks(), x.failures(), x.directShare(), x.p50Ms(), x.p99Ms()));
    }
    Files.writeString(csv, sb.toString(), StandardCharsets.UTF_8);
    out.println();
    out.println("chart:       " + png);
    out.println("time series: " + csv);
  }

  /** Reads {@code --mode dssmr|ssmr}. */
  static Client.Mode mode(Args a, Client.Mode def) throws Args.UsageException {
    String v = a.choice("mode", null, "dssmr", "ds-smr", "ssmr", "s-smr");
    return v == null ? def : v.startsWith("d") ? Client.Mode.DSSMR : Client.Mode.SSMR;
  }

  /** Reads {@code --workload timeline|post|follow|mix}. */
  static Workload workload(Args a, Workload def) throws Args.UsageException {
    String v = a.string("workload", null);
    if (v == null) {
      return def;
    }
    try {
      return Workload.parse(v);
    } catch (IllegalArgumentException e) {
      throw new Args.UsageException(e.getMessage());
    }
  }
}
