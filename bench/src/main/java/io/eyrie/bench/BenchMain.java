package io.eyrie.bench;

import io.eyrie.tools.Args;
import io.eyrie.tools.Command;
import io.eyrie.tools.CommandLine;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * {@code bin/bench}: checks a benchmark's whole command line with the same parser as every Eyrie
 * program ({@code --help}, unknown options rejected, durations as {@code 20} or {@code 20s})
 * before handing it, with durations in whole seconds, to the benchmark's own entry point. A
 * benchmark runs for minutes or hours, so nothing may start on a misspelt option.
 */
public final class BenchMain {
  private BenchMain() {}

  /** A benchmark whose main takes {@code --name value} options. */
  private record Bench(String name, String summary, String usage, Set<String> valued, Set<String> switches,
      Set<String> durations, Main main) implements Command {

    @Override
    public int run(Args a, PrintStream out, PrintStream err) throws Exception {
      a.noPositional();
      List<String> argv = new ArrayList<>();
      for (String o : valued) {
        if (a.has(o)) {
          argv.add("--" + o);
          argv.add(durations.contains(o) ? Long.toString(seconds(a, o)) : a.string(o, null));
        }
      }
      for (String s : switches) {
        if (a.flag(s)) {
          argv.add("--" + s);
        }
      }
      main.run(argv.toArray(new String[0]));
      return 0;
    }

    private static long seconds(Args a, String o) throws Args.UsageException {
      Duration d = a.duration(o, Duration.ZERO, Duration.ZERO);
      if (d.toMillis() % 1000 != 0) {
        throw new Args.UsageException("option --" + o + " takes whole seconds, got " + a.string(o, ""));
      }
      return d.toSeconds();
    }
  }

  /** A benchmark's entry point. */
  @FunctionalInterface
  private interface Main {
    void run(String[] args) throws Exception;
  }

  static final Command MULTICAST = new Bench("multicast",
      "throughput and latency of multicasts to 1, 2 and 4 groups next to raw Ratis", """
      usage: bin/bench multicast [--duration 20s] [--warmup 5s] [--clients N] [--window W] [--out DIR]
                                 [--groups 1,2,4] [--raw true|false] [--dssmr true|false] [--isolated N]
                                 [--channel-window N] [--submit-in-flight N] [--event-loop-threads N]
                                 [--jit-warmup 120s] [--tls true|false] [--raft-transport netty|grpc]

        An embedded 3-node cluster; results in DIR/multicast.{csv,md} (default bench/results), or
        DIR/multicast-TRANSPORT[-tls].{csv,md} with --raft-transport grpc or --tls true.
        --tls: mutual TLS on every node's ports, with certificates made for the run.
        --raft-transport: the Raft ports' transport, netty (default, Eyrie's Netty RPC) or grpc
          (Ratis's gRPC; the raw Ratis phase too), to compare them (issue 28). Neither it nor --tls
          reaches the DS-SMR phases (their own cluster, on the defaults): --dssmr false to compare.
        --jit-warmup: run the loaded phases unmeasured until the JIT is quiet, at most this long.""",
      Set.of("duration", "warmup", "clients", "window", "out", "groups", "raw", "dssmr", "isolated",
          "channel-window", "submit-in-flight", "event-loop-threads", "jit-warmup", "tls", "raft-transport"),
      Set.of(), Set.of("duration", "warmup", "jit-warmup"), MulticastBenchmark::main);

  static final Command TABLE1 = new Bench("table1",
      "the paper's Table 1: S-SMR and DS-SMR per workload and partition count", """
      usage: bin/bench table1 [--partitions 1,2,4,8] [--workloads timeline,post,follow,mix]
                              [--duration 20s] [--warmup 10s] [--post-warmup D] [--follow-warmup D]
                              [--users N] [--follows N] [--communities N] [--in-community F]
                              [--clients N] [--window N] [--seed N] [--no-baseline] [--out DIR]
                              [--modes ssmr,dssmr,graph] [--interleave K]

        --modes: ssmr (S-SMR), dssmr (DS-SMR with Chirper's community-hinted oracle), graph
        (DS-SMR with the learned placement, no hint, and a rebalancer); default ssmr,dssmr.
        --interleave K: run a cell's modes side by side (each on its own cluster, in this JVM),
        warm each up, then measure each K times in alternating windows (ABBA order) instead of
        once, one mode after the other; a cell is the mean of its windows, and table1.md lists
        every window and each round's DS-SMR/S-SMR ratio.
        See bench/README.md; results in DIR (default bench/results/table1).""",
      Set.of("partitions", "workloads", "modes", "duration", "warmup", "post-warmup", "follow-warmup", "users", "follows",
          "communities", "in-community", "clients", "window", "seed", "out", "interleave"),
      Set.of("no-baseline"), Set.of("duration", "warmup", "post-warmup", "follow-warmup"),
      Table1::main);

  static final Command COMMUNITY_SHIFT = new Bench("community-shift",
      "learned placement on a bank workload whose communities change halfway (issue 16)", """
      usage: bin/bench community-shift [--phase 90s] [--accounts N] [--communities N] [--clients N] [--window N]
                                       [--out DIR]

        An embedded 3-node cluster, 4 partitions, the GRAPH oracle and a rebalancer; results in
        DIR/community-shift.{csv,md} (default bench/results/issue16).""",
      Set.of("phase", "accounts", "communities", "clients", "window", "out"),
      Set.of(), Set.of("phase"), CommunityShiftBenchmark::main);

  static final Command ELASTIC = new Bench("elastic",
      "a partition added to a running cluster under load, then another drained (issue 16)", """
      usage: bin/bench elastic [--before 40s] [--after 60s] [--accounts N] [--communities N] [--clients N]
                               [--window N] [--out DIR]

        An embedded 3-node cluster, 3 partitions, the GRAPH oracle and a rebalancer; p3 is added
        after --before, p0 drained --after later; results in DIR/elastic.md (default
        bench/results/issue16).""",
      Set.of("before", "after", "accounts", "communities", "clients", "window", "out"),
      Set.of(), Set.of("before", "after"), ElasticBenchmark::main);

  static final Command BANK_PLACEMENT = new Bench("bank-placement",
      "bank transfers without locality under S-SMR, DS-SMR and the learned placement, interleaved (issue 16)", """
      usage: bin/bench bank-placement [--modes ssmr,dssmr,graph] [--warmup 20s] [--duration 10s] [--rounds 2]
                                      [--accounts N] [--clients N] [--window N] [--out DIR]

        A fresh embedded cluster per mode (3 nodes, 4 partitions), all started first; each mode warmed
        up --warmup, then --rounds rounds of --duration windows, the modes in order in odd rounds
        and reversed in even ones (ABBA), so that no mode gets a warmer JIT; a mode's figure is the
        mean of its windows. Results in DIR/bank-placement.md (default bench/results/issue16).""",
      Set.of("modes", "warmup", "duration", "rounds", "accounts", "clients", "window", "out"),
      Set.of(), Set.of("warmup", "duration"), BankPlacementBenchmark::main);

  static final Command IDLE_CONNECTIONS = new Bench("idle-connections",
      "a node's memory with connections that send nothing or half a frame, with and without its caps (issue 28)", """
      usage: bin/bench idle-connections [--connections N] [--out DIR]

        One node in this JVM; N connections that send nothing and N that send half of a 1 MiB frame,
        measured open and after the frame idle timeout, with the node's default caps and with them
        off. Results in DIR/idle-connections.md (default bench/results).""",
      Set.of("connections", "out"), Set.of(), Set.of(), IdleConnectionsBenchmark::main);

  /** {@code bench micro}: the JMH micro benchmarks with short settings. */
  static final Command MICRO = new Command() {
    @Override
    public String name() {
      return "micro";
    }

    @Override
    public String summary() {
      return "codec, location cache, oracle and fan-out micro benchmarks (JMH, short settings)";
    }

    @Override
    public String usage() {
      return """
          usage: bin/bench micro [--out DIR] [--include REGEXP]

            --out DIR          where micro.json and micro.md go (default bench/results)
            --include REGEXP   which benchmarks (default the four of io.eyrie.bench)""";
    }

    @Override
    public Set<String> valued() {
      return Set.of("out", "include");
    }

    @Override
    public int run(Args a, PrintStream out, PrintStream err) throws Exception {
      List<String> argv = new ArrayList<>(a.positional());
      if (argv.size() > 2) {
        throw new Args.UsageException("unexpected argument '" + argv.get(2) + "'");
      }
      if (a.has("out") || a.has("include")) {
        if (!argv.isEmpty()) {
          throw new Args.UsageException("give --out and --include, or OUT_DIR [REGEXP], not both");
        }
        argv.add(a.string("out", "bench/results"));
        if (a.has("include")) {
          argv.add(a.string("include", null));
        }
      }
      MicroReport.main(argv.toArray(new String[0]));
      return 0;
    }
  };

  /** {@code bench jmh}: JMH's own command line, which checks its options itself. */
  static final Command JMH = new Command() {
    @Override
    public String name() {
      return "jmh";
    }

    @Override
    public String summary() {
      return "JMH with its own options (bin/bench jmh -h lists them)";
    }

    @Override
    public String usage() {
      return "usage: bin/bench jmh [JMH options]   (bin/bench jmh -lh lists JMH's options; -l the benchmarks)";
    }

    @Override
    public Set<String> valued() {
      return Set.of();
    }

    @Override
    public int run(Args a, PrintStream out, PrintStream err) {
      throw new IllegalStateException("run through main: JMH parses its own options");
    }
  };

  static CommandLine commandLine() {
    return new CommandLine("bench", List.of(MULTICAST, TABLE1, COMMUNITY_SHIFT, ELASTIC, BANK_PLACEMENT, IDLE_CONNECTIONS, MICRO, JMH));
  }

  /**
   * Entry point.
   *
   * @param args the command line
   * @throws Exception if JMH fails
   */
  public static void main(String[] args) throws Exception {
    System.setProperty("java.awt.headless", "true");
    io.eyrie.multicast.Node.prepareJvm();
    if (args.length > 0 && args[0].equals("jmh") && !(args.length == 2 && args[1].equals("--help"))) {
      org.openjdk.jmh.Main.main(java.util.Arrays.copyOfRange(args, 1, args.length));
      return;
    }
    System.exit(run(args, System.out, System.err));
  }

  /**
   * Runs a command line without exiting the JVM (the benchmarks themselves may exit it).
   *
   * @param args the command line
   * @param out where results go
   * @param err where problems go
   * @return the exit code
   */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    return commandLine().run(args, out, err);
  }
}
