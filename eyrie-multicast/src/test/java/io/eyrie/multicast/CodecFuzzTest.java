package io.eyrie.multicast;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Mutated encodings of valid values decode to a value or fail with
 * {@link IllegalArgumentException}, never with another exception or an error, and never allocate
 * much. The seed is printed; replay one with {@code -Deyrie.fuzz.seed=SEED}.
 */
@Timeout(300)
class CodecFuzzTest {
  private static final int ITERATIONS = 20_000;
  /** Far above what a value of a few hundred bytes may allocate, far below a declared-size blowup. */
  private static final long MAX_ALLOCATION_PER_DECODE = 16L << 20;

  /** A record with array, string, collection and map components. */
  public record Profile(String name, int[] tags, List<String> friends, Map<String, Long> scores, byte[] avatar,
      Object[] extra, double[] weights, char[] initials) {}

  @Test
  void mutatedPayloadsDecodeOrFailCleanly() {
    long seed = Long.getLong("eyrie.fuzz.seed", System.nanoTime());
    System.out.println("CodecFuzzTest seed " + seed + " (replay with -Deyrie.fuzz.seed=" + seed + ")");
    Codec codec = new Codec(HostileSizes.registry().toBuilder().register(101, Profile.class)
        .register(102, char[].class).register(103, double[].class).build());
    List<byte[]> valid = new ArrayList<>();
    for (Object v : values()) {
      valid.add(codec.encode(v));
    }
    Random rnd = new Random(seed);
    int decoded = 0;
    for (int i = 0; i < ITERATIONS; i++) {
      byte[] bytes = mutate(valid.get(rnd.nextInt(valid.size())), rnd);
      long before = HostileSizes.allocatedHere();
      try {
        codec.decode(bytes);
        decoded++;
      } catch (IllegalArgumentException expected) {
        // refused cleanly
      } catch (Throwable t) {
        fail("seed " + seed + ", iteration " + i + ", bytes " + HexFormat.of().formatHex(bytes) + ": " + t, t);
      }
      long allocated = HostileSizes.allocatedHere() - before;
      assertTrue(allocated < MAX_ALLOCATION_PER_DECODE, "seed " + seed + ", iteration " + i + ": allocated "
          + allocated + " bytes for " + bytes.length + " bytes: " + HexFormat.of().formatHex(bytes));
    }
    System.out.println("CodecFuzzTest: " + decoded + " of " + ITERATIONS + " mutations still decoded");
  }

  private static List<Object> values() {
    List<Object> vs = new ArrayList<>();
    vs.add(new HostileSizes.Seed(new long[] {1, 2, 3, Long.MAX_VALUE}));
    vs.add(new HostileSizes.Seed(null));
    Map<String, Long> scores = new HashMap<>();
    scores.put("alice", 3L);
    scores.put("bob", -1L);
    vs.add(new Profile("zoë", new int[] {1, 1 << 20, -5}, new ArrayList<>(List.of("a", "bc")), scores,
        new byte[] {9, 8, 7}, new Object[] {1L, "two", null, new long[] {3}}, new double[] {0.5},
        new char[] {'z', 'ë'}));
    vs.add(new Profile(null, null, null, null, null, null, null, null));
    vs.add("a plain ascii string");
    vs.add("ünïcødé ✓ string");
    vs.add(new long[] {5, 6, 7});
    vs.add(new String[] {"x", null, "yz"});
    vs.add(new ArrayList<>(Arrays.asList(1L, null, "s", new int[] {2})));
    vs.add(new ArrayList<>(Arrays.asList(null, null, null)));
    vs.add(new TreeSet<>(List.of("b", "a")));
    vs.add(new TreeMap<>(Map.of(1, "one", 2, "two")));
    vs.add(new HashMap<>(Map.of("k", new long[] {1})));
    vs.add(new Object[] {new Object[] {"nested"}, 3});
    // Frames as a node's client endpoint decodes them.
    GroupId p0 = GroupId.valueOf("p0");
    vs.add(new io.eyrie.multicast.internal.Wire.ClientRequest(5, new io.eyrie.multicast.internal.Wire.Start(
        MsgId.valueOf(1, 2, 0), new GroupId[] {p0, GroupId.valueOf("p1")}, p0, new byte[] {1, 2, 3, 4}, 0)));
    vs.add(new io.eyrie.multicast.internal.Wire.QueryRequest(6, p0, new byte[] {9, 9}));
    return vs;
  }

  /** One to three mutations: flip a bit, insert, delete, overwrite, or write a huge varint. */
  private static byte[] mutate(byte[] valid, Random rnd) {
    byte[] b = valid.clone();
    int n = 1 + rnd.nextInt(3);
    for (int m = 0; m < n; m++) {
      int at = b.length == 0 ? 0 : rnd.nextInt(b.length);
      switch (rnd.nextInt(5)) {
        case 0 -> {
          if (b.length > 0) {
            b[at] ^= (byte) (1 << rnd.nextInt(8));
          }
        }
        case 1 -> {
          byte[] c = new byte[b.length + 1];
          System.arraycopy(b, 0, c, 0, at);
          c[at] = (byte) rnd.nextInt(256);
          System.arraycopy(b, at, c, at + 1, b.length - at);
          b = c;
        }
        case 2 -> {
          if (b.length > 1) {
            byte[] c = new byte[b.length - 1];
            System.arraycopy(b, 0, c, 0, at);
            System.arraycopy(b, at + 1, c, at, b.length - at - 1);
            b = c;
          }
        }
        case 3 -> {
          if (b.length > 0) {
            b[at] = (byte) rnd.nextInt(256);
          }
        }
        default -> {
          // A huge varint (up to 2^31 - 1, or with the UTF-8/flag bit set) in place of a length.
          int v = rnd.nextBoolean() ? Integer.MAX_VALUE : (1 << (20 + rnd.nextInt(11))) + 1;
          byte[] varint = varint(v, rnd.nextBoolean());
          byte[] c = new byte[Math.max(b.length, at + varint.length)];
          System.arraycopy(b, 0, c, 0, b.length);
          System.arraycopy(varint, 0, c, at, varint.length);
          b = c;
        }
      }
    }
    return b;
  }

  private static byte[] varint(int v, boolean flagged) {
    com.esotericsoftware.kryo.io.Output out = new com.esotericsoftware.kryo.io.Output(8, -1);
    if (flagged) {
      out.writeVarIntFlag(true, v, true);
    } else {
      out.writeVarInt(v, true);
    }
    return out.toBytes();
  }
}
