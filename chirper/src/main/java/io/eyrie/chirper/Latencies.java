package io.eyrie.chirper;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Command latencies, recorded from the clients' I/O threads into an HdrHistogram
 * {@link Recorder} (no lock on the recording path, bounded memory, three significant digits).
 * It answers percentiles for the whole run and for the interval since the previous interval
 * query, which is how the per-second progress line gets its own. The benchmarks use it too.
 */
public final class Latencies {
  private final Recorder recorder = new Recorder(3);
  private final Histogram total = new Histogram(3);
  private final Histogram interval = new Histogram(3);
  private Histogram swap;

  /** Records a latency given in nanoseconds (kept in microseconds). */
  public void add(long nanos) {
    recorder.recordValue(Math.max(0, nanos / 1000));
  }

  /** Returns how many latencies were recorded. */
  public synchronized long size() {
    drain();
    return total.getTotalCount();
  }

  /**
   * Returns quantiles, in milliseconds, of every latency recorded (NaN when there is none).
   *
   * @param qs quantiles between 0 and 1
   * @return one value per quantile
   */
  public synchronized double[] quantilesMs(double... qs) {
    drain();
    return quantiles(total, qs);
  }

  /**
   * Returns quantiles of the whole run, as {@link #quantilesMs(double...)}.
   *
   * @param from must be 0 (the whole run; kept for callers written against the former list of
   *     samples, where it was the first sample's index)
   * @param qs quantiles between 0 and 1
   * @return one value per quantile
   */
  public double[] quantilesMs(int from, double... qs) {
    if (from != 0) {
      throw new IllegalArgumentException("from must be 0; use intervalQuantilesMs for an interval");
    }
    return quantilesMs(qs);
  }

  /**
   * Returns quantiles, in milliseconds, of the latencies recorded since the previous call of this
   * method (NaN when there is none), and starts a new interval.
   *
   * @param qs quantiles between 0 and 1
   * @return one value per quantile
   */
  public synchronized double[] intervalQuantilesMs(double... qs) {
    drain();
    double[] out = quantiles(interval, qs);
    interval.reset();
    return out;
  }

  private void drain() {
    swap = recorder.getIntervalHistogram(swap);
    total.add(swap);
    interval.add(swap);
  }

  private static double[] quantiles(Histogram h, double[] qs) {
    double[] out = new double[qs.length];
    for (int i = 0; i < qs.length; i++) {
      out[i] = h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(qs[i] * 100) / 1000.0;
    }
    return out;
  }
}
