package io.eyrie.multicast;

import com.esotericsoftware.kryo.io.Output;
import java.lang.management.ManagementFactory;

/** Hostile encodings that declare huge sizes in a few bytes, and allocation measurement. */
public final class HostileSizes {
  private HostileSizes() {}

  /** A record like chirper's {@code SeedUser}: its followers as a long[]. */
  public record Seed(long[] followers) {}

  /** The id {@link Seed} is registered with. */
  public static final int SEED_ID = 100;

  /** A registry with {@link Seed}. */
  public static CodecRegistry registry() {
    return CodecRegistry.newBuilder().register(SEED_ID, Seed.class).build();
  }

  /**
   * The encoding of a {@link Seed} whose followers declare {@code count} elements, followed by
   * one real element: about 8 bytes.
   */
  public static byte[] seed(long count) {
    Output out = new Output(16, -1);
    out.writeVarInt(SEED_ID + 2, true); // Kryo writes a class as its registration id + 2
    out.writeVarInt((int) (count + 1), true); // an array's length + 1 (0 is null)
    out.writeVarLong(42, true);
    out.writeVarLong(7, true);
    return out.toBytes();
  }

  /** Bytes allocated by the current thread so far. */
  public static long allocatedHere() {
    return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
  }

  /** Bytes allocated so far by all live threads. */
  public static long allocatedEverywhere() {
    com.sun.management.ThreadMXBean b = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long sum = 0;
    for (long a : b.getThreadAllocatedBytes(b.getAllThreadIds())) {
      sum += Math.max(0, a);
    }
    return sum;
  }
}
