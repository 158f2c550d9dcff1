package io.eyrie.chirper;

import io.eyrie.core.ClientStats;
import io.eyrie.core.Reply;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/**
 * Loads a social graph into a cluster: every user, then every follow, with many commands in
 * flight at once (one at a time would take minutes, since each waits for consensus). Both steps
 * can be repeated: an existing user answers nok and an existing follow answers false, so a load
 * generator may run the setup against a cluster that already has the graph.
 */
final class GraphSetup {

  /**
   * What the setup did.
   *
   * @param created users created
   * @param existed users that existed already
   * @param follows follow commands executed
   * @param took how long it took
   * @param stats the proxies' counters during the setup (moves, retries)
   * @param timeouts commands that got no answer in time and were sent again (a user created by
   *     a timed-out attempt then counts as existing)
   */
  record Outcome(int created, int existed, int follows, Duration took, ClientStats stats, int timeouts) {}

  /** Attempts per command: a timeout (outcome unknown) is retried, since both commands are idempotent. */
  private static final int ATTEMPTS = 3;

  private final List<ChirperClient> clients;
  private final int inFlight;
  private final Duration timeout;
  private final AtomicInteger timeouts = new AtomicInteger();
  private java.io.PrintStream progress;

  /**
   * Creates a setup.
   *
   * @param clients the proxies to spread the commands over
   * @param inFlight most commands outstanding at once
   * @param timeout how long the whole setup may take
   */
  GraphSetup(List<ChirperClient> clients, int inFlight, Duration timeout) {
    this.clients = clients;
    this.inFlight = inFlight;
    this.timeout = timeout;
  }

  /** Prints a progress line to {@code out} every two seconds while users and follows are created. */
  GraphSetup progressTo(java.io.PrintStream out) {
    this.progress = out;
    return this;
  }

  /**
   * Creates the graph's users and follows.
   *
   * @param g the graph
   * @return what was done
   * @throws Exception the first command that failed, or a {@link TimeoutException}
   */
  Outcome run(SocialGraph g) throws Exception {
    long start = System.nanoTime();
    long deadline = start + timeout.toNanos();
    ClientStats before = Stats.sum(clients);
    AtomicInteger created = new AtomicInteger();
    AtomicInteger existed = new AtomicInteger();
    int users = g.params().users();
    runAll("setup: users", users, deadline, i -> c -> c.createUser(i, g.community(i)), r -> {
      (r.isOk() ? created : existed).incrementAndGet();
    });
    List<long[]> edges = g.follows();
    runAll("setup: follows", edges.size(), deadline, i -> c -> c.follow(edges.get(i)[0], edges.get(i)[1]), r -> {
      if (!r.isOk()) {
        throw new IllegalStateException("follow refused: " + r.reason());
      }
    });
    return new Outcome(created.get(), existed.get(), edges.size(), Duration.ofNanos(System.nanoTime() - start),
        Stats.minus(Stats.sum(clients), before), timeouts.get());
  }

  private interface Check {
    void accept(Reply r) throws Exception;
  }

  private void runAll(String what, int n, long deadline,
      IntFunction<Function<ChirperClient, CompletableFuture<Reply>>> cmd, Check check) throws Exception {
    Semaphore permits = new Semaphore(inFlight);
    ProgressLine.Loading line = progress == null ? null : new ProgressLine.Loading(progress, what, n);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    for (int i = 0; i < n && failure.get() == null; i++) {
      if (!permits.tryAcquire(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
        throw new TimeoutException("setup did not finish within " + timeout.toSeconds() + " s");
      }
      ChirperClient c = clients.get(i % clients.size());
      Function<ChirperClient, CompletableFuture<Reply>> f = cmd.apply(i);
      withRetries(() -> f.apply(c), ATTEMPTS).whenComplete((r, e) -> {
        try {
          if (e != null) {
            failure.compareAndSet(null, LoadRunner.unwrap(e));
          } else {
            check.accept(r);
          }
        } catch (Exception ex) {
          failure.compareAndSet(null, ex);
        } finally {
          if (line != null) {
            line.advance();
          }
          permits.release();
        }
      });
    }
    if (!permits.tryAcquire(inFlight, Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
      throw new TimeoutException("setup did not finish within " + timeout.toSeconds() + " s");
    }
    Throwable t = failure.get();
    if (t instanceof Exception ex) {
      throw ex;
    } else if (t != null) {
      throw new IllegalStateException(t);
    }
  }

  private CompletableFuture<Reply> withRetries(Supplier<CompletableFuture<Reply>> send, int attempts) {
    return send.get().exceptionallyCompose(e -> {
      if (attempts > 1 && LoadRunner.unwrap(e) instanceof TimeoutException) {
        timeouts.incrementAndGet();
        return withRetries(send, attempts - 1);
      }
      return CompletableFuture.failedFuture(e);
    });
  }
}
