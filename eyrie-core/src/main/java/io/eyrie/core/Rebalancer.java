package io.eyrie.core;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves objects toward the oracle's learned placement in the background: every period it asks
 * the oracle for up to {@code batch} objects whose partition differs from the plan and moves them
 * ({@link Client#rebalance}). The rate limit is the batch per period, so a rebalance never
 * floods the cluster with moves; the moves are ordinary linearizable moves. Useful only with an
 * oracle created with {@code OracleStateMachine.Placement.GRAPH} (with another oracle the plan is
 * empty and nothing moves). One rebalancer per cluster is enough; several only repeat each
 * other's moves (a move from a partition that no longer holds the object changes nothing).
 *
 * <p>A round that moves nothing doubles the wait before the next, up to
 * {@value #MAX_BACKOFF} periods, so a converged placement costs a few queries every several
 * seconds instead of every period; a round that moves objects brings the wait back to one period.
 */
public final class Rebalancer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Rebalancer.class);

  private final Client client;
  private final int batch;
  private final ScheduledExecutorService timer;
  private final AtomicLong moved = new AtomicLong();
  private final long periodMs;
  /** How many periods the next wait lasts (doubled by a round that moved nothing). */
  private long waitPeriods = 1;
  /** The longest wait, in periods. */
  static final int MAX_BACKOFF = 8;

  private Rebalancer(Client client, Duration period, int batch) {
    this.client = client;
    this.batch = batch;
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "eyrie-rebalancer");
      t.setDaemon(true);
      return t;
    });
    this.periodMs = period.toMillis();
    timer.schedule(this::round, periodMs, TimeUnit.MILLISECONDS);
  }

  /**
   * Starts a rebalancer.
   *
   * @param client the client it moves objects with (not closed by the rebalancer)
   * @param period how often it asks the oracle (for example 1 s)
   * @param batch the most objects it moves per period (for example 64)
   * @return the running rebalancer
   */
  public static Rebalancer start(Client client, Duration period, int batch) {
    if (period.isNegative() || period.isZero() || batch <= 0) {
      throw new IllegalArgumentException("period and batch must be positive: " + period + ", " + batch);
    }
    return new Rebalancer(client, period, batch);
  }

  /** One round, then the next is scheduled; rounds never overlap (one timer thread). */
  private void round() {
    int n = 0;
    try {
      n = client.rebalance(batch).get(30, TimeUnit.SECONDS);
      moved.addAndGet(n);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    } catch (Exception e) {
      LOG.debug("rebalance round failed: {}", e.toString());
    }
    waitPeriods = n > 0 ? 1 : Math.min(2 * waitPeriods, MAX_BACKOFF);
    try {
      timer.schedule(this::round, waitPeriods * periodMs, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // closed
    }
  }

  /** Returns how many objects this rebalancer has moved (counting every move it sent). */
  public long moved() {
    return moved.get();
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
