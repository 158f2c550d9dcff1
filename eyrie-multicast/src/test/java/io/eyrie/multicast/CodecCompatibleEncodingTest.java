package io.eyrie.multicast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link CodecRegistry.Encoding#COMPATIBLE} across two releases of a class (design 4.7.1): two
 * classes registered under the same id in two registries stand for the class in release N,
 * with fields (a, b), and in release N+1, with (a, b, c). Each reads what the other wrote: N
 * skips c, N+1 leaves c at its constructor's value.
 */
@Timeout(30)
class CodecCompatibleEncodingTest {
  private static final int ID = 100;

  /** The class in release N. */
  static final class AccountV1 {
    long a;
    String b;

    AccountV1() {}

    AccountV1(long a, String b) {
      this.a = a;
      this.b = b;
    }
  }

  /**
   * The class in release N+1: fields added, of types both releases decode, none a generic
   * collection (see {@link CodecRegistry.Encoding}): a string and a registered class.
   */
  static final class AccountV2 {
    long a;
    String b;
    String c = "default";
    Tags d;

    AccountV2() {}

    AccountV2(long a, String b, String c, Tags d) {
      this.a = a;
      this.b = b;
      this.c = c;
      this.d = d;
    }
  }

  /** A class both releases register (N registers it before N+1 adds a field of it). */
  static final class Tags {
    ArrayList<String> tags = new ArrayList<>();

    Tags() {}

    Tags(String... t) {
      tags.addAll(List.of(t));
    }
  }

  /** A message holding compatible objects, itself compatible, in release N. */
  static final class BatchV1 {
    ArrayList<AccountV1> accounts = new ArrayList<>();
  }

  /** The same message in release N+1. */
  static final class BatchV2 {
    ArrayList<AccountV2> accounts = new ArrayList<>();
  }

  private static Codec release(Class<?> account, Class<?> batch, CodecRegistry.Encoding e) {
    return new Codec(CodecRegistry.newBuilder().register(ID, account, e).register(ID + 1, batch, e)
        .register(ID + 2, Tags.class, e).build());
  }

  private static final Codec N = release(AccountV1.class, BatchV1.class, CodecRegistry.Encoding.COMPATIBLE);
  private static final Codec N1 = release(AccountV2.class, BatchV2.class, CodecRegistry.Encoding.COMPATIBLE);

  @Test
  void theNewerReleaseReadsTheOlderObjectsWithTheAddedFieldAtItsDefault() {
    AccountV2 r = assertInstanceOf(AccountV2.class, N1.decode(N.encode(new AccountV1(7, "seven"))));
    assertEquals(7, r.a);
    assertEquals("seven", r.b);
    assertEquals("default", r.c);
    assertNull(r.d);
  }

  @Test
  void theOlderReleaseReadsTheNewerObjectsSkippingTheAddedField() {
    AccountV1 r = assertInstanceOf(AccountV1.class,
        N.decode(N1.encode(new AccountV2(8, "eight", "c", new Tags("x", "y")))));
    assertEquals(8, r.a);
    assertEquals("eight", r.b);
    AccountV1 n = assertInstanceOf(AccountV1.class, N.decode(N1.encode(new AccountV2(9, null, null, null))));
    assertEquals(9, n.a);
    assertNull(n.b);
  }

  @Test
  void nestedCompatibleObjectsCrossBothWaysAndEachReleaseEncodesDeterministically() {
    BatchV1 old = new BatchV1();
    for (int i = 0; i < 3; i++) {
      old.accounts.add(new AccountV1(i, "a" + i));
    }
    BatchV2 up = assertInstanceOf(BatchV2.class, N1.decode(N.encode(old)));
    assertEquals(3, up.accounts.size());
    assertEquals(2, up.accounts.get(2).a);
    assertEquals("default", up.accounts.get(1).c);
    up.accounts.get(0).c = "new";
    up.accounts.get(0).d = new Tags("t");
    byte[] bytes = N1.encode(up);
    assertEquals(java.util.Arrays.toString(bytes), java.util.Arrays.toString(N1.encode(N1.decode(bytes))));
    BatchV1 down = assertInstanceOf(BatchV1.class, N.decode(bytes));
    assertEquals("a0", down.accounts.get(0).b);
    assertEquals(3, down.accounts.size());
  }

  @Test
  void withTheDefaultEncodingTheAddedFieldBreaksTheOlderRelease() {
    // Why the option exists: Kryo's default encoding has no field names, so N cannot tell where
    // N+1's object ends (it fails, or reads the wrong values).
    Codec n = release(AccountV1.class, BatchV1.class, CodecRegistry.Encoding.DEFAULT);
    Codec n1 = release(AccountV2.class, BatchV2.class, CodecRegistry.Encoding.DEFAULT);
    byte[] newer = n1.encode(new AccountV2(8, "eight", "c", null));
    assertThrows(IllegalArgumentException.class, () -> n.decode(newer), "trailing bytes at least");
    byte[] older = n.encode(new AccountV1(7, "seven"));
    assertThrows(IllegalArgumentException.class, () -> n1.decode(older));
  }

  @Test
  void theEncodingIsPartOfTheRegistryAndOnlyForPlainClasses() {
    CodecRegistry compatible = CodecRegistry.newBuilder().register(ID, AccountV1.class, CodecRegistry.Encoding.COMPATIBLE)
        .build();
    CodecRegistry plain = CodecRegistry.newBuilder().register(ID, AccountV1.class).build();
    assertEquals(CodecRegistry.Encoding.COMPATIBLE, compatible.encoding(ID));
    assertEquals(CodecRegistry.Encoding.DEFAULT, plain.encoding(ID));
    assertNotEquals(compatible, plain, "nodes and clients must agree on the encoding too");
    assertEquals(compatible, compatible.toBuilder().build());
    assertEquals(CodecRegistry.Encoding.COMPATIBLE, compatible.toBuilder().build().encoding(ID));
    assertTrue(compatible.toString().contains("(compatible)"), compatible.toString());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> compatible.toBuilder().register(ID, AccountV1.class));
    assertTrue(e.getMessage().contains("the other encoding"), e.getMessage());
    record Point(int x, int y) {}
    assertThrows(IllegalArgumentException.class,
        () -> CodecRegistry.newBuilder().register(ID, Point.class, CodecRegistry.Encoding.COMPATIBLE));
    assertThrows(IllegalArgumentException.class,
        () -> CodecRegistry.newBuilder().register(ID, NoDefaultConstructor.class, CodecRegistry.Encoding.COMPATIBLE));
    // Registration stays required: a compatible class's unregistered field is refused.
    Codec c = new Codec(CodecRegistry.newBuilder().register(ID, Holder.class, CodecRegistry.Encoding.COMPATIBLE).build());
    Holder h = new Holder();
    h.inside = new NoDefaultConstructor(1);
    assertThrows(IllegalArgumentException.class, () -> c.encode(h));
  }

  static final class NoDefaultConstructor {
    final int v;

    NoDefaultConstructor(int v) {
      this.v = v;
    }
  }

  static final class Holder {
    Object inside;
  }

  @Test
  void aHostileCountOfFieldNamesIsRefusedBeforeAnythingIsAllocated() {
    com.esotericsoftware.kryo.io.Output out = new com.esotericsoftware.kryo.io.Output(16, -1);
    out.writeVarInt(ID + 2, true); // the class (Kryo writes id + 2)
    out.writeVarInt(1 << 30, true); // a billion field names in a few bytes
    out.writeString("a");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> N.decode(out.toBytes()));
    assertTrue(e.getMessage().contains("declares 1073741824 elements"), e.getMessage());
  }
}
