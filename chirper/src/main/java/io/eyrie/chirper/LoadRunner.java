package io.eyrie.chirper;

import io.eyrie.core.ClientStats;
import io.eyrie.core.Reply;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Consumer;

/**
 * Closed-loop load (the paper's §6.1 clients): one thread per Chirper client keeps up to
 * {@code window} commands outstanding and issues the next as soon as one completes, for a fixed
 * time. Once per second it samples throughput, moves, retries, fallbacks and latencies. Commands
 * still outstanding at the end may drain for a bounded time; they count in the totals but not in
 * the throughput, which covers only the load window.
 */
public final class LoadRunner {

  /**
   * Load parameters.
   *
   * @param duration how long to issue commands
   * @param window commands outstanding per client
   * @param drain how long to wait for outstanding commands after the load window
   * @param seed seeds the clients' random choices
   */
  public record Config(Duration duration, int window, Duration drain, long seed) {}

  /**
   * What happened in one second of the load window (counts are for that second only).
   *
   * @param second seconds since the start, 1 for the first
   * @param commands commands completed successfully
   * @param moves move commands sent
   * @param retries retry answers
   * @param fallbacks commands that fell back to S-SMR
   * @param failures commands that failed or timed out
   * @param directShare share of commands issued that ran in one partition at once
   * @param p50Ms median latency of the completions in that second
   * @param p99Ms 99th percentile latency of the completions in that second
   */
  public record Sample(int second, long commands, long moves, long retries, long fallbacks, long failures,
      double directShare, double p50Ms, double p99Ms) {}

  /** Sees every command's outcome; called on the clients' I/O threads, so it must be quick. */
  interface Observer {
    /**
     * A command completed.
     *
     * @param op the command
     * @param startNanos when it was issued ({@link System#nanoTime()})
     * @param endNanos when it completed
     * @param value the reply's value (a {@code List<Post>} for a timeline), or null if it failed
     * @param error why it failed (unwrapped; {@link TimeoutException} if the outcome is unknown), or null
     */
    void completed(Workload.Op op, long startNanos, long endNanos, Object value, Throwable error);
  }

  /**
   * The outcome of a run.
   *
   * @param window the load window
   * @param completed commands completed successfully, drain included
   * @param completedInWindow commands completed successfully within the window
   * @param timeouts commands whose outcome is unknown (no answer within the client's timeout)
   * @param errors commands that failed otherwise
   * @param unfinished commands still outstanding when the drain ended
   * @param perKind successful commands by {@link Workload.Kind} ordinal
   * @param latencies latencies of successful commands
   * @param kindLatencies the same by {@link Workload.Kind} ordinal
   * @param samples one per second of the window
   * @param stats the client proxies' counters during the run
   * @param errorExamples the first few error messages
   * @param timeoutExamples the first few timeouts (to find what they waited for)
   */
  public record Result(Duration window, long completed, long completedInWindow, long timeouts, long errors,
      long unfinished, long[] perKind, Latencies latencies, List<Sample> samples, ClientStats stats,
      List<String> errorExamples, List<Throwable> timeoutExamples, Latencies[] kindLatencies) {

    /** Returns the commands completed per second in the measured window. */
    public double throughput() {
      return completedInWindow / (window.toNanos() / 1e9);
    }
  }

  private static final int ERROR_EXAMPLES = 5;

  private final List<ChirperClient> clients;
  private final OpGenerator generator;
  private final Config config;
  private Observer observer = (op, s, e, v, err) -> { };
  private Consumer<Sample> onSecond = s -> { };

  private final Latencies latencies = new Latencies();
  private final Latencies[] kindLatencies = java.util.stream.Stream.generate(Latencies::new)
      .limit(Workload.Kind.values().length).toArray(Latencies[]::new);
  private final AtomicLong completed = new AtomicLong();
  private final AtomicLong completedInWindow = new AtomicLong();
  private final AtomicLong timeouts = new AtomicLong();
  private final AtomicLong errors = new AtomicLong();
  private final AtomicLongArray perKind = new AtomicLongArray(Workload.Kind.values().length);
  private final List<String> errorExamples = Collections.synchronizedList(new ArrayList<>());
  private final List<Throwable> timeoutExamples = Collections.synchronizedList(new ArrayList<>());
  private volatile long windowEnd;

  public LoadRunner(List<ChirperClient> clients, OpGenerator generator, Config config) {
    if (clients.isEmpty() || config.window() < 1) {
      throw new IllegalArgumentException("need at least one client and a window of at least 1");
    }
    this.clients = clients;
    this.generator = generator;
    this.config = config;
  }

  LoadRunner observer(Observer o) {
    this.observer = o;
    return this;
  }

  public LoadRunner onSecond(Consumer<Sample> c) {
    this.onSecond = c;
    return this;
  }

  /**
   * Runs the load and waits for its end (window plus drain).
   *
   * @return what happened
   * @throws InterruptedException if interrupted; outstanding commands are left to the clients
   */
  public Result run() throws InterruptedException {
    ClientStats before = Stats.sum(clients);
    long start = System.nanoTime();
    windowEnd = start + config.duration().toNanos();
    List<Semaphore> permits = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < clients.size(); i++) {
      Semaphore s = new Semaphore(config.window());
      permits.add(s);
      ChirperClient c = clients.get(i);
      Random rnd = new Random(config.seed() * 1_000_003L + i);
      Thread t = new Thread(() -> issueLoop(c, s, rnd), "chirper-load-" + i);
      t.setDaemon(true);
      threads.add(t);
    }
    List<Sample> samples = Collections.synchronizedList(new ArrayList<>());
    ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "chirper-load-ticker");
      t.setDaemon(true);
      return t;
    });
    Ticker tick = new Ticker(before, samples);
    ticker.scheduleAtFixedRate(tick::tick, 1, 1, TimeUnit.SECONDS);
    threads.forEach(Thread::start);
    try {
      for (Thread t : threads) {
        t.join();
      }
      long drainEnd = System.nanoTime() + config.drain().toNanos();
      long unfinished = 0;
      for (Semaphore s : permits) {
        long left = Math.max(0, drainEnd - System.nanoTime());
        if (s.tryAcquire(config.window(), left, TimeUnit.NANOSECONDS)) {
          s.release(config.window());
        } else {
          unfinished += config.window() - s.availablePermits();
        }
      }
      ticker.shutdown();
      ticker.awaitTermination(5, TimeUnit.SECONDS);
      // The last tick may have been cut off by a few milliseconds; do not report a partial second.
      tick.tick();
      long[] kinds = new long[perKind.length()];
      for (int i = 0; i < kinds.length; i++) {
        kinds[i] = perKind.get(i);
      }
      return new Result(config.duration(), completed.get(), completedInWindow.get(), timeouts.get(), errors.get(),
          unfinished, kinds, latencies, List.copyOf(samples), Stats.minus(Stats.sum(clients), before),
          List.copyOf(errorExamples), List.copyOf(timeoutExamples), kindLatencies.clone());
    } finally {
      ticker.shutdownNow();
      threads.forEach(Thread::interrupt);
    }
  }

  private void issueLoop(ChirperClient client, Semaphore permits, Random rnd) {
    try {
      while (true) {
        long left = windowEnd - System.nanoTime();
        if (left <= 0) {
          return;
        }
        if (!permits.tryAcquire(Math.min(left, 100_000_000L), TimeUnit.NANOSECONDS)) {
          continue;
        }
        if (System.nanoTime() >= windowEnd) {
          permits.release();
          return;
        }
        Workload.Op op = generator.next(rnd);
        long t0 = System.nanoTime();
        send(client, op).whenComplete((v, e) -> {
          try {
            record(op, t0, v, e);
          } finally {
            permits.release();
          }
        });
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static CompletableFuture<Object> send(ChirperClient client, Workload.Op op) {
    CompletableFuture<Reply> r = switch (op.kind()) {
      case TIMELINE -> null;
      case POST -> client.post(op.post());
      case FOLLOW -> client.follow(op.user(), op.other());
      case UNFOLLOW -> client.unfollow(op.user(), op.other());
    };
    if (r == null) {
      return client.timeline(op.user()).thenApply(list -> list);
    }
    return r.thenApply(reply -> {
      if (!reply.isOk()) {
        throw new IllegalStateException(op.kind().label() + " by user " + op.user() + " refused: " + reply.reason());
      }
      return reply.value();
    });
  }

  private void record(Workload.Op op, long t0, Object value, Throwable e) {
    long t1 = System.nanoTime();
    Throwable cause = unwrap(e);
    if (cause == null) {
      latencies.add(t1 - t0);
      kindLatencies[op.kind().ordinal()].add(t1 - t0);
      completed.incrementAndGet();
      if (t1 <= windowEnd) {
        completedInWindow.incrementAndGet();
      }
      perKind.incrementAndGet(op.kind().ordinal());
    } else if (cause instanceof TimeoutException) {
      timeouts.incrementAndGet();
      if (timeoutExamples.size() < ERROR_EXAMPLES) {
        timeoutExamples.add(cause);
      }
    } else {
      errors.incrementAndGet();
      if (errorExamples.size() < ERROR_EXAMPLES) {
        errorExamples.add(op.kind().label() + ": " + cause);
      }
    }
    observer.completed(op, t0, t1, cause == null ? value : null, cause);
  }

  private long seconds() {
    return (config.duration().toMillis() + 999) / 1000;
  }

  static Throwable unwrap(Throwable e) {
    while (e instanceof CompletionException && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }

  /** Turns the running totals into per-second samples. */
  private final class Ticker {
    private ClientStats last;
    private long lastCompleted;
    private long lastFailed;
    private final List<Sample> samples;

    Ticker(ClientStats start, List<Sample> samples) {
      this.last = start;
      this.samples = samples;
    }

    synchronized void tick() {
      if (samples.size() >= seconds()) {
        return; // the drain after the window is not part of the time series
      }
      ClientStats now = Stats.sum(clients);
      ClientStats d = Stats.minus(now, last);
      long done = completedInWindow.get();
      long failed = timeouts.get() + errors.get();
      double[] q = latencies.intervalQuantilesMs(0.5, 0.99);
      Sample s = new Sample(samples.size() + 1, done - lastCompleted, d.moves(), d.retries(), d.fallbacks(),
          failed - lastFailed, d.directShare(), q[0], q[1]);
      last = now;
      lastCompleted = done;
      lastFailed = failed;
      samples.add(s);
      onSecond.accept(s);
    }
  }
}
