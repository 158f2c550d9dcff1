package io.eyrie.multicast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The registry is immutable, and a class names its own serializer. */
@Timeout(30)
class CodecRegistryTest {
  record Transfer(long from, long to) {}

  record Balance(long amount) {}

  /** Written as its amount negated: the annotation names the serializer, no registry call does. */
  @com.esotericsoftware.kryo.DefaultSerializer(Mirrored.Writer.class)
  record Mirrored(long amount) {
    /** Public, with a public constructor: Kryo creates it. */
    public static final class Writer extends Serializer<Mirrored> {
      @Override
      public void write(Kryo kryo, Output output, Mirrored m) {
        output.writeVarLong(-m.amount(), false);
      }

      @Override
      public Mirrored read(Kryo kryo, Input input, Class<? extends Mirrored> type) {
        return new Mirrored(-input.readVarLong(false));
      }
    }
  }

  @Test
  void aBuiltRegistryDoesNotChangeWithItsBuilderNorWithACopy() {
    CodecRegistry.Builder b = CodecRegistry.newBuilder().register(100, Transfer.class);
    CodecRegistry first = b.build();
    b.register(101, Balance.class);
    CodecRegistry more = first.toBuilder().register(101, Balance.class).build();

    assertEquals(Map.of(100, Transfer.class), first.registrations());
    assertEquals(Map.of(100, Transfer.class, 101, Balance.class), more.registrations());
    assertEquals(more, b.build());
    assertNotEquals(first, more);
    assertThrows(UnsupportedOperationException.class, () -> first.registrations().put(102, Balance.class));
    assertEquals(Map.of(), CodecRegistry.empty().registrations());
  }

  @Test
  void theBuilderKeepsTheChecks() {
    assertThrows(IllegalArgumentException.class, () -> CodecRegistry.newBuilder().register(99, Transfer.class));
    assertThrows(IllegalArgumentException.class,
        () -> CodecRegistry.newBuilder().register(100, Transfer.class).register(100, Balance.class));
    assertThrows(IllegalArgumentException.class,
        () -> CodecRegistry.newBuilder().register(100, Transfer.class).register(101, Transfer.class));
    assertThrows(IllegalArgumentException.class, () -> CodecRegistry.newBuilder().registerEyrie(39, Transfer.class));
    assertThrows(IllegalArgumentException.class, () -> CodecRegistry.newBuilder().registerEyrie(90, Transfer.class));
    CodecRegistry app = CodecRegistry.newBuilder().register(100, Balance.class).build();
    assertThrows(IllegalArgumentException.class,
        () -> CodecRegistry.newBuilder().register(100, Transfer.class).include(app));
    CodecRegistry modules = CodecRegistry.newBuilder().registerEyrie(40, Transfer.class).build();
    assertEquals(Map.of(40, Transfer.class, 100, Balance.class),
        modules.toBuilder().include(app).build().registrations());
  }

  @Test
  void aClassNamesItsOwnSerializer() {
    Codec codec = new Codec(CodecRegistry.newBuilder().register(100, Mirrored.class).build());
    byte[] bytes = codec.encode(new Mirrored(5));

    assertEquals(new Mirrored(5), codec.decode(bytes));
    assertEquals(new Mirrored(-5), codec.decode(new byte[] {bytes[0], 10}), "read through the annotation's serializer");
  }
}
