package io.eyrie.chirper;

import java.io.PrintStream;
import java.util.Locale;
import java.util.function.Consumer;

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
}
