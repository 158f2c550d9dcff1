package io.eyrie.multicast.internal.transport;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;

/**
 * Warnings that a remote peer can provoke at will (a refused connection, a timed-out frame),
 * logged at most {@link #PER_SECOND} a second for each kind so that a peer cannot flood the log;
 * the next warning logged of that kind says how many were left out. Thread-safe.
 */
final class RateLimitedWarnings {
  /** Warnings of one kind logged per second at most. */
  static final int PER_SECOND = 5;

  private final Logger log;
  private final ConcurrentHashMap<String, Window> windows = new ConcurrentHashMap<>();

  RateLimitedWarnings(Logger log) {
    this.log = log;
  }

  private static final class Window {
    long start = System.nanoTime() - TimeUnit.SECONDS.toNanos(1);
    int logged;
    long suppressed;
  }

  /**
   * Logs a warning of a kind unless {@link #PER_SECOND} of that kind were logged in the last second.
   *
   * @param kind what fired (one rate per kind)
   * @param format an SLF4J format
   * @param args its arguments
   */
  void warn(String kind, String format, Object... args) {
    Window w = windows.computeIfAbsent(kind, k -> new Window());
    long left;
    synchronized (w) {
      long now = System.nanoTime();
      if (now - w.start >= TimeUnit.SECONDS.toNanos(1)) {
        w.start = now;
        w.logged = 0;
      }
      if (w.logged >= PER_SECOND) {
        w.suppressed++;
        return;
      }
      w.logged++;
      left = w.suppressed;
      w.suppressed = 0;
    }
    if (left > 0) {
      log.warn(format + " ({} more of this kind not logged)", append(args, left));
    } else {
      log.warn(format, args);
    }
  }

  private static Object[] append(Object[] args, Object last) {
    Object[] out = java.util.Arrays.copyOf(args, args.length + 1);
    out[args.length] = last;
    return out;
  }
}
