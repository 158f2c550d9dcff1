package io.eyrie.chirper;

import java.util.Arrays;

/**
 * Command latencies in microseconds, appended from the clients' I/O threads. Keeping every value
 * (8 bytes per command) gives exact percentiles for the whole run and for any contiguous range of
 * appends, which is how the per-second progress line gets its own. The benchmarks use it too.
 */
public final class Latencies {
  private long[] micros = new long[1 << 14];
  private int size;

  /** Appends a latency given in nanoseconds. */
  public synchronized void add(long nanos) {
    if (size == micros.length) {
      micros = Arrays.copyOf(micros, size * 2);
    }
    micros[size++] = nanos / 1000;
  }

  /** Returns how many latencies were appended. */
  public synchronized int size() {
    return size;
  }

  /** Returns the given quantiles, in milliseconds, of the values appended at index from..size-1. */
  public double[] quantilesMs(int from, double... qs) {
    long[] copy;
    synchronized (this) {
      copy = Arrays.copyOfRange(micros, Math.min(from, size), size);
    }
    Arrays.sort(copy);
    double[] out = new double[qs.length];
    for (int i = 0; i < qs.length; i++) {
      out[i] = copy.length == 0 ? Double.NaN : copy[index(qs[i], copy.length)] / 1000.0;
    }
    return out;
  }

  private static int index(double q, int n) {
    return (int) Math.max(0, Math.min(n - 1, Math.ceil(q * n) - 1));
  }
}
