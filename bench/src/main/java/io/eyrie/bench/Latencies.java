package io.eyrie.bench;

import java.util.Arrays;

/** Collects operation latencies (nanoseconds) from many threads; percentiles by sorting. */
final class Latencies {
  private long[] values = new long[1 << 16];
  private int size;

  synchronized void add(long nanos) {
    if (size == values.length) {
      values = Arrays.copyOf(values, size * 2);
    }
    values[size++] = nanos;
  }

  synchronized int count() {
    return size;
  }

  /** Returns the q-quantile in milliseconds (q in [0,1]). */
  synchronized double quantileMs(double q) {
    if (size == 0) {
      return Double.NaN;
    }
    long[] s = Arrays.copyOf(values, size);
    Arrays.sort(s);
    int i = (int) Math.min(size - 1, Math.max(0, Math.ceil(q * size) - 1));
    return s[i] / 1e6;
  }
}
