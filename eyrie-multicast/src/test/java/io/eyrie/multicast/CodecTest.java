package io.eyrie.multicast;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The codec's limits (review F9). */
@Timeout(60)
public class CodecTest {

  /**
   * The encoding of {@code depth} (at least 2) ArrayLists nested in each other, built from the
   * bytes of two and three levels (encoding it directly would need as deep a stack): one more
   * level inserts the same bytes at the same place.
   */
  public static byte[] nestedLists(Codec codec, int depth) {
    byte[] a = codec.encode(nested(2));
    byte[] b = codec.encode(nested(3));
    int at = 0;
    while (a[at] == b[at]) {
      at++;
    }
    byte[] level = Arrays.copyOfRange(b, at, at + b.length - a.length);
    byte[] out = new byte[a.length + level.length * (depth - 2)];
    System.arraycopy(a, 0, out, 0, at);
    for (int i = 0; i < depth - 2; i++) {
      System.arraycopy(level, 0, out, at + i * level.length, level.length);
    }
    System.arraycopy(a, at, out, out.length - (a.length - at), a.length - at);
    assertArrayEquals(b, depth == 3 ? out : nestedLists(codec, 3));
    return out;
  }

  private static Object nested(int depth) {
    Object v = new ArrayList<>();
    for (int i = 1; i < depth; i++) {
      ArrayList<Object> l = new ArrayList<>();
      l.add(v);
      v = l;
    }
    return v;
  }

  @Test
  void deeplyNestedInputIsRefusedWithAClearError() {
    Codec codec = new Codec(CodecRegistry.empty());
    byte[] bytes = nestedLists(codec, 200_000);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> codec.decode(bytes));
    assertTrue(e.getMessage().contains("nest"), e.getMessage());
    // The codec still works.
    assertEquals(5L, codec.decode(codec.encode(5L)));
  }

  @Test
  void nestingUpToTheLimitRoundTripsAndBeyondIsRefusedAtEncoding() {
    Codec codec = new Codec(CodecRegistry.empty());
    byte[] ok = codec.encode(nested(Codec.MAX_DEPTH));
    assertEquals(nested(Codec.MAX_DEPTH), codec.decode(ok));
    assertArrayEquals(ok, nestedLists(codec, Codec.MAX_DEPTH));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> codec.encode(nested(Codec.MAX_DEPTH + 1)));
    assertTrue(e.getMessage().contains("nest"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> codec.decode(nestedLists(codec, Codec.MAX_DEPTH + 1)));
  }

  record Transfer(long from, long to) {}

  /** The streams hold what {@link Codec#encode} returns, and reading takes no byte more. */
  @Test
  void theStreamsHoldTheEncodedBytesAndReadNoFurther() {
    Codec codec = new Codec(CodecRegistry.newBuilder().register(100, Transfer.class).build());
    List<Object> values = List.of(new Transfer(1, -2), "ünïcødé", new ArrayList<>(List.of(1L, 2L)), Long.MAX_VALUE);
    ByteArrayOutputStream plain = new ByteArrayOutputStream();
    Output kryo = new Output(16, -1);
    ByteArrayOutputStream expected = new ByteArrayOutputStream();
    for (Object v : values) {
      codec.write(plain, v);
      codec.write(kryo, v);
      expected.writeBytes(codec.encode(v));
    }
    assertArrayEquals(expected.toByteArray(), plain.toByteArray());
    assertArrayEquals(expected.toByteArray(), kryo.toBytes());

    ByteArrayInputStream in = new ByteArrayInputStream(plain.toByteArray());
    Input kryoIn = new Input(kryo.toBytes());
    for (Object v : values) {
      assertEquals(v, codec.read(in));
      assertEquals(v, codec.read(kryoIn));
    }
    assertEquals(0, in.available());
    assertFalse(kryoIn.canReadVarInt());
  }
}
