package io.eyrie.chirper;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * The live progress line of a load run, once per second: rewritten in place on a terminal, one
 * line per second otherwise (logs and pipes do not understand carriage returns).
 */
public final class ProgressLine implements Consumer<LoadRunner.Sample> {
  private final PrintStream out;
  private final boolean tty;
  private final int seconds;
  private int lastLength;

  public ProgressLine(PrintStream out, boolean tty, int seconds) {
    this.out = out;
    this.tty = tty;
    this.seconds = seconds;
  }

  /** Returns true if standard output looks like a terminal. */
  static boolean stdoutIsTerminal() {
    return System.console() != null && System.getenv("TERM") != null && !"dumb".equals(System.getenv("TERM"));
  }

  @Override
  public synchronized void accept(LoadRunner.Sample s) {
    String line = String.format(Locale.ROOT,
        "[%3d/%ds] %8d cmd/s | moves %4d/s | retries %4d/s | fallbacks %3d | single-partition %5.1f%%"
            + " | p50 %6.2f ms | p99 %7.2f ms | failed %d",
        s.second(), seconds, s.commands(), s.moves(), s.retries(), s.fallbacks(), 100 * s.directShare(),
        nan0(s.p50Ms()), nan0(s.p99Ms()), s.failures());
    if (tty) {
      out.print("\r" + line + " ".repeat(Math.max(0, lastLength - line.length())));
      lastLength = line.length();
    } else {
      out.println(line);
    }
    out.flush();
  }

  /** Ends the in-place line so that what follows starts on a line of its own. */
  synchronized void finish() {
    if (tty && lastLength > 0) {
      out.println();
    }
  }

  private static double nan0(double v) {
    return Double.isNaN(v) ? 0 : v;
  }

  /**
   * The progress line of a long load (a demo's setup, a benchmark's bulk-loaded graph): "what:
   * done of total (rate/s)", at most once per interval and one line each (loads run for minutes
   * and their output usually goes to a log). Thread-safe: completions advance it from any thread.
   */
  public static final class Loading {
    private final PrintStream out;
    private final String what;
    private final long total;
    private final long intervalNanos;
    private final LongSupplier clock;
    private final long start;
    private final AtomicLong done = new AtomicLong();
    private final AtomicLong next;

    /** A line every two seconds to {@code out}, for {@code total} items of {@code what}. */
    public Loading(PrintStream out, String what, long total) {
      this(out, what, total, 2_000_000_000L, System::nanoTime);
    }

    Loading(PrintStream out, String what, long total, long intervalNanos, LongSupplier clock) {
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
}
