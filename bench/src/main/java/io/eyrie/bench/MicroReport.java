package io.eyrie.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs the four micro benchmarks with short settings and writes {@code micro.json} (JMH's
 * own JSON) and {@code micro.md} (a table built from the same results) to a directory.
 * Usage: {@code MicroReport [outDir] [regexp]}.
 */
public final class MicroReport {
  private MicroReport() {}

  /** Entry point. */
  public static void main(String[] args) throws RunnerException, IOException {
    Path out = Path.of(args.length > 0 ? args[0] : "bench/results");
    String include = args.length > 1 ? args[1]
        : "io\\.eyrie\\.bench\\.(CodecBenchmark|LocationCacheBenchmark|OracleBenchmark|FanoutBenchmark)\\..*";
    Files.createDirectories(out);
    Path json = out.resolve("micro.json");
    Options opts = new OptionsBuilder().include(include).forks(1)
        .warmupIterations(2).warmupTime(TimeValue.seconds(2))
        .measurementIterations(3).measurementTime(TimeValue.seconds(3))
        .jvmArgsAppend("-Xmx2g")
        .result(json.toString()).resultFormat(ResultFormatType.JSON).build();
    Collection<RunResult> results = new Runner(opts).run();
    Files.writeString(out.resolve("micro.md"), markdown(results));
    System.out.println("wrote " + json + " and " + out.resolve("micro.md"));
  }

  private static String markdown(Collection<RunResult> results) {
    StringBuilder sb = new StringBuilder();
    sb.append("# Micro benchmarks (JMH)\n\n")
        .append("Run ").append(Instant.now()).append(" with `bin/bench micro` (-f 1 -wi 2 -w 2s -i 3 -r 3s), JDK ")
        .append(System.getProperty("java.version")).append(", ")
        .append(Runtime.getRuntime().availableProcessors()).append(" cores.\n\n")
        .append("**Caveat:** the 2-core machine was shared with other builds during the run, and the settings are ")
        .append("short (one fork, three iterations), so the numbers are noisy: read them as orders of magnitude, ")
        .append("not as precise costs. Raw results: `micro.json`.\n\n")
        .append("| Benchmark | Params | Mode | Score | Error (99.9%) | Units |\n|---|---|---|---:|---:|---|\n");
    List<RunResult> sorted = new ArrayList<>(results);
    sorted.sort((a, b) -> label(a).compareTo(label(b)));
    for (RunResult r : sorted) {
      Result<?> p = r.getPrimaryResult();
      sb.append(String.format(Locale.ROOT, "| %s | %s | %s | %.3f | %s | %s |%n",
          r.getParams().getBenchmark().replace("io.eyrie.bench.", ""), params(r), r.getParams().getMode().shortLabel(),
          p.getScore(), Double.isNaN(p.getScoreError()) ? "n/a" : String.format(Locale.ROOT, "%.3f", p.getScoreError()),
          p.getScoreUnit()));
      if (r.getParams().getMode() == org.openjdk.jmh.annotations.Mode.SampleTime) {
        for (Map.Entry<String, Result> e : r.getSecondaryResults().entrySet()) {
          if (e.getKey().endsWith("p0.50") || e.getKey().endsWith("p0.99")) {
            sb.append(String.format(Locale.ROOT, "| %s | %s | %s | %.3f | | %s |%n",
                r.getParams().getBenchmark().replace("io.eyrie.bench.", ""), params(r), e.getKey(),
                e.getValue().getScore(), e.getValue().getScoreUnit()));
          }
        }
      }
    }
    return sb.toString();
  }

  private static String label(RunResult r) {
    return r.getParams().getBenchmark() + " " + params(r);
  }

  private static String params(RunResult r) {
    StringBuilder sb = new StringBuilder();
    for (String k : r.getParams().getParamsKeys()) {
      sb.append(sb.length() == 0 ? "" : ", ").append(k).append('=').append(r.getParams().getParam(k));
    }
    return sb.toString();
  }
}
