package io.eyrie.core.internal;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.protocol.Observed;
import io.eyrie.core.protocol.SamplesReq;
import java.util.ArrayDeque;
import java.util.ArrayList;

/**
 * Owns a partition replica's access samples for the learned placement: the objects of some of the
 * single-partition commands that touch several objects, handed to the oracle when it asks
 * ({@link SamplesReq}). Not replicated and never read by execution: each replica keeps its
 * own, and only the leader's are asked for, so they cannot make replicas diverge. Thread-safe
 * (queries may come from another thread than execution).
 */
public final class AccessSampler {
  /** Every how many multi-object single-partition commands one is sampled. */
  public static final int SAMPLE_EVERY = 4;
  /** The most samples kept between two {@link SamplesReq}s (older ones are dropped). */
  public static final int MAX_SAMPLES = 4096;
  private final ArrayDeque<long[]> samples = new ArrayDeque<>();
  private long sampleTick;

  /** Remembers the objects of one in {@link #SAMPLE_EVERY} commands that touch several objects. */
  public void sample(Command cmd) {
    if (cmd.objects().size() < 2 || ++sampleTick % SAMPLE_EVERY != 0) {
      return;
    }
    synchronized (samples) {
      if (samples.size() == MAX_SAMPLES) {
        samples.pollFirst();
      }
      samples.addLast(cmd.objects().stream().mapToLong(ObjId::value).toArray());
    }
  }

  /** Returns the samples kept since the last call, and forgets them. */
  public Observed drain() {
    synchronized (samples) {
      ArrayList<long[]> out = new ArrayList<>(samples);
      samples.clear();
      return new Observed(out, SAMPLE_EVERY);
    }
  }
}
