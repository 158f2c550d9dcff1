package io.eyrie.chirper;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * The progress line of a long load (a demo's setup, a benchmark's bulk-loaded graph): "what:
 * done of total (rate/s)", at most once per interval and one line each (loads run for minutes
 * and their output usually goes to a log). Thread-safe: completions advance it from any thread.
 */
public final class LoadProgress {
  private final PrintStream out;
  private final String what;
  private final long total;
  private final long intervalNanos;
  private final LongSupplier clock;
  private final long start;
  private final AtomicLong done = new AtomicLong();
  private final AtomicLong next;

  /** A line every two seconds to {@code out}, for {@code total} items of {@code what}. */
  public LoadProgress(PrintStream out, String what, long total) {
    this(out, what, total, 2_000_000_000L, System::nanoTime);
  }

  LoadProgress(PrintStream out, String what, long total, long intervalNanos, LongSupplier clock) {
    this.out = out;
    this.what = what;
    this.total = total;
    this.intervalNanos = intervalNanos;
    this.clock = clock;
    this.start = clock.getAsLong();
    this.next = new AtomicLong(start + intervalNanos);
  }

  /** One more item done; prints the line if the interval has passed since the last one. */
  public void advance() {
    long d = done.incrementAndGet();
    long now = clock.getAsLong();
    long due = next.get();
    if (now >= due && next.compareAndSet(due, now + intervalNanos)) {
      double secs = Math.max(1e-9, (now - start) / 1e9);
      out.printf(Locale.ROOT, "%s: %,d of %,d (%,.0f/s)%n", what, d, total, d / secs);
    }
  }

  /** Items done so far. */
  public long done() {
    return done.get();
  }
}
