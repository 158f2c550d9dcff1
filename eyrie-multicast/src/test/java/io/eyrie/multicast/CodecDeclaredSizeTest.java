package io.eyrie.multicast;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.esotericsoftware.kryo.io.Output;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Declared sizes are bounded by the bytes that follow them (issue 26 item 0, kryo#1282). */
@Timeout(60)
class CodecDeclaredSizeTest {
  private static final long MAX_ALLOCATION = 64L << 20;

  @Test
  void hostileLongArrayInARecordIsRefusedWithoutAllocating() {
    Codec codec = new Codec(HostileSizes.registry());
    for (long count : new long[] {1L << 26, 1L << 29, (1L << 31) - 2}) {
      byte[] bytes = HostileSizes.seed(count);
      assertTrue(bytes.length <= 10, "a few bytes: " + bytes.length);
      long before = HostileSizes.allocatedHere();
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> codec.decode(bytes));
      long allocated = HostileSizes.allocatedHere() - before;
      assertTrue(e.getMessage().contains("declares " + count + " elements"), e.getMessage());
      assertTrue(allocated < MAX_ALLOCATION, count + " elements declared: allocated " + allocated + " bytes");
    }
    // The same shape with an honest length still decodes.
    HostileSizes.Seed s = codec.decode(codec.encode(new HostileSizes.Seed(new long[] {1, 2, 3})), HostileSizes.Seed.class);
    assertArrayEquals(new long[] {1, 2, 3}, s.followers());
  }

  @Test
  void everyLengthPrefixedTypeIsBounded() {
    Codec codec = new Codec(CodecRegistry.empty());
    int huge = (1 << 30) + 1;
    // Registration ids: byte[] 10, Object[] 11, ArrayList 25, TreeSet 26, TreeMap 27, HashMap 28,
    // long[] 29, int[] 30, String[] 31; String is Kryo's own (id 1, 3 on the wire).
    int[] ids = {10, 11, 29, 30, 31};
    for (int id : ids) {
      Output out = new Output(16, -1);
      out.writeVarInt(id + 2, true);
      out.writeVarInt(huge, true);
      out.writeByte(1);
      assertRefused(codec, out.toBytes(), "id " + id);
    }
    // Collections and maps: a flags-and-size varint (ArrayList with unknown elements: same-type flag).
    Output list = new Output(16, -1);
    list.writeVarInt(25 + 2, true);
    list.writeVarIntFlag(false, huge, true);
    list.writeByte(1);
    assertRefused(codec, list.toBytes(), "ArrayList");
    // A list of nulls is encoded as its size and one null class byte: a huge one is refused too.
    Output nulls = new Output(16, -1);
    nulls.writeVarInt(25 + 2, true);
    nulls.writeVarIntFlag(true, huge, true);
    nulls.writeByte(0);
    assertRefused(codec, nulls.toBytes(), "ArrayList of nulls");
    Output map = new Output(16, -1);
    map.writeVarInt(28 + 2, true);
    map.writeVarInt(huge, true);
    map.writeByte(1);
    assertRefused(codec, map.toBytes(), "HashMap");
    Output string = new Output(16, -1);
    string.writeVarInt(1 + 2, true);
    string.writeVarIntFlag(true, huge, true);
    string.writeByte('a');
    assertRefused(codec, string.toBytes(), "String");
  }

  private static void assertRefused(Codec codec, byte[] bytes, String what) {
    long before = HostileSizes.allocatedHere();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> codec.decode(bytes), what);
    long allocated = HostileSizes.allocatedHere() - before;
    assertTrue(e.getMessage().contains("declares"), what + ": " + e.getMessage());
    assertTrue(allocated < MAX_ALLOCATION, what + ": allocated " + allocated + " bytes");
  }

  /** A value whose reading runs out of memory, as a huge allocation would. */
  record Greedy(Object inner) {}

  /** What {@link Greedy} holds: its serializer, named by the annotation, runs out of memory. */
  @com.esotericsoftware.kryo.DefaultSerializer(Gulp.Serializer.class)
  static final class Gulp {
    /** Public, with a public constructor: Kryo creates it. */
    public static final class Serializer extends com.esotericsoftware.kryo.Serializer<Gulp> {
      @Override
      public void write(com.esotericsoftware.kryo.Kryo kryo, Output output, Gulp object) {
        output.writeByte(1);
      }

      @Override
      public Gulp read(com.esotericsoftware.kryo.Kryo kryo, com.esotericsoftware.kryo.io.Input input,
          Class<? extends Gulp> type) {
        throw new OutOfMemoryError("simulated");
      }
    }
  }

  /** Kryo wraps an error thrown inside a record in a KryoException: the codec unwraps it. */
  @Test
  void aJvmErrorWhileDecodingIsRethrownNotAnsweredAsMalformed() {
    Codec codec = new Codec(CodecRegistry.newBuilder().register(100, Greedy.class).register(101, Gulp.class).build());
    byte[] bytes = codec.encode(new Greedy(new Gulp()));
    OutOfMemoryError e = assertThrows(OutOfMemoryError.class, () -> codec.decode(bytes));
    assertEquals("simulated", e.getMessage());
  }

  @Test
  void honestValuesStillRoundTrip() {
    Codec codec = new Codec(HostileSizes.registry());
    List<Object> values = new ArrayList<>();
    values.add("");
    values.add("ascii");
    values.add("ünïcødé ✓");
    values.add(new byte[] {1, 2, 3});
    values.add(new long[] {Long.MAX_VALUE, -1, 0});
    values.add(new int[] {Integer.MIN_VALUE, 5});
    values.add(new String[] {"a", null, "ü"});
    values.add(new Object[] {1L, "x", null});
    values.add(new ArrayList<>(List.of("a", "b")));
    ArrayList<Object> nulls = new ArrayList<>();
    nulls.add(null);
    nulls.add(null);
    values.add(nulls);
    values.add(new ArrayList<>(java.util.Collections.nCopies(1000, null)));
    values.add(new TreeSet<>(List.of(3, 1, 2)));
    values.add(new TreeMap<>(java.util.Map.of("k", 1L)));
    values.add(new HashMap<>(java.util.Map.of(1, "v", 2, "w")));
    for (Object v : values) {
      Object back = codec.decode(codec.encode(v));
      assertEquals(java.util.Arrays.deepToString(new Object[] {v}), java.util.Arrays.deepToString(new Object[] {back}));
    }
  }
}
