package io.eyrie.multicast.testing;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Deadline-bounded polling for tests. */
public final class Waits {
  private Waits() {}

  /**
   * Polls a condition every 20 ms until it holds.
   *
   * @param timeout the deadline
   * @param condition the condition
   * @param what describes the state on failure
   * @throws AssertionError if the condition does not hold in time
   */
  public static void until(Duration timeout, BooleanSupplier condition, Supplier<String> what) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + timeout + ": " + what.get());
      }
      LockSupport.parkNanos(20_000_000L);
      if (Thread.interrupted()) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while waiting: " + what.get());
      }
    }
  }
}
