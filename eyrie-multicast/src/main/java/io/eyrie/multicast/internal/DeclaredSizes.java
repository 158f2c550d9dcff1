package io.eyrie.multicast.internal;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.Registration;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import com.esotericsoftware.kryo.serializers.CollectionSerializer;
import com.esotericsoftware.kryo.serializers.CompatibleFieldSerializer;
import com.esotericsoftware.kryo.serializers.DefaultArraySerializers;
import com.esotericsoftware.kryo.serializers.DefaultSerializers;
import com.esotericsoftware.kryo.serializers.MapSerializer;
import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Bounds the sizes that encoded arrays, strings, collections and maps declare by the bytes that
 * follow them in the input.
 *
 * <p>Kryo 5.6 allocates an array, a string's characters or a list's backing array from the
 * declared length before reading any element, so eight hostile bytes declaring a {@code long[]}
 * of 2^31 elements make the decoder try a 16 GiB allocation. Each element takes at least one
 * byte (a varint, a null marker or a class id; a {@code char} two, a {@code float} four, a
 * {@code double} eight), so a declared length larger than the remaining bytes allow is refused
 * with a {@link KryoException} before anything is allocated. An allocation is thus at most a small
 * multiple of the input's length (eight times for a {@code long[]} or an {@code Object[]}).
 *
 * <p>Strings, and bulk reads of primitives with a declared length (which serializers, the
 * application's included, pass to the input), are checked by {@link BoundedInput}.
 *
 * <p>The check needs to know how many bytes remain, which an {@link Input} over an array does; an
 * input reading from a stream (a snapshot, which this node wrote or its group's leader sent) is
 * not checked. Collections whose elements are all null are encoded in no bytes per element; a
 * decoded value may hold {@value #NULLS_PER_DECODE} such elements in all, or eight per byte of
 * its input if that is more. Serializers the application registers itself, and Kryo's other
 * collection serializers (such as those for {@code List.of}), are not wrapped: they must bound
 * their own sizes.
 */
public final class DeclaredSizes {
  private DeclaredSizes() {}

  /**
   * Replaces the serializers of Kryo's length-prefixed types (arrays, and collections and maps
   * with Kryo's default serializers) among the registrations with ids {@code 0..maxId} by ones
   * that check the declared length first. Call after registering.
   *
   * @param k the Kryo instance
   * @param maxId the highest registration id in use
   */
  public static void install(Kryo k, int maxId) {
    for (int id = 0; id <= maxId; id++) {
      Registration r = k.getRegistration(id);
      if (r == null) {
        continue;
      }
      Serializer<?> bounded = bounded(r.getType(), r.getSerializer());
      if (bounded != null) {
        r.setSerializer(bounded);
      }
    }
  }

  @SuppressWarnings({"rawtypes", "unchecked"})
  private static Serializer<?> bounded(Class<?> type, Serializer<?> s) {
    Class<?> sc = s.getClass();
    if (type.isArray()) {
      int min = minBytesPerElement(sc);
      return min > 0 ? new BoundedArray(s, min) : null;
    }
    if (sc == CollectionSerializer.class) {
      return new BoundedCollection();
    }
    if (sc == DefaultSerializers.TreeSetSerializer.class) {
      return new BoundedTreeSet();
    }
    if (sc == MapSerializer.class) {
      return new BoundedMap();
    }
    if (sc == DefaultSerializers.TreeMapSerializer.class) {
      return new BoundedTreeMap();
    }
    return null;
  }

  /** The fewest bytes Kryo's array serializer writes per element, or 0 if not one of Kryo's. */
  private static int minBytesPerElement(Class<?> serializer) {
    if (serializer == DefaultArraySerializers.DoubleArraySerializer.class) {
      return 8;
    }
    if (serializer == DefaultArraySerializers.FloatArraySerializer.class) {
      return 4;
    }
    if (serializer == DefaultArraySerializers.CharArraySerializer.class
        || serializer == DefaultArraySerializers.ShortArraySerializer.class) {
      return 2;
    }
    if (serializer == DefaultArraySerializers.ByteArraySerializer.class
        || serializer == DefaultArraySerializers.BooleanArraySerializer.class
        || serializer == DefaultArraySerializers.IntArraySerializer.class
        || serializer == DefaultArraySerializers.LongArraySerializer.class
        || serializer == DefaultArraySerializers.StringArraySerializer.class
        || serializer == DefaultArraySerializers.ObjectArraySerializer.class) {
      return 1; // a varint, a null marker, a class id, or an element's first byte
    }
    return 0;
  }

  /**
   * Kryo's {@code CompatibleFieldSerializer} for a class, not chunked (a chunked input would
   * escape these bounds), that refuses a declared count of field names the bytes cannot hold
   * before Kryo allocates arrays of that size (each name takes at least one byte).
   *
   * @param k the Kryo instance the serializer is for
   * @param type the class
   * @return the serializer
   */
  public static <T> Serializer<T> compatible(Kryo k, Class<T> type) {
    CompatibleFieldSerializer.CompatibleFieldSerializerConfig config =
        new CompatibleFieldSerializer.CompatibleFieldSerializerConfig();
    config.setChunkedEncoding(false);
    config.setReadUnknownFieldData(true);
    return new BoundedCompatible<>(k, type, config);
  }

  private static final class BoundedCompatible<T> extends CompatibleFieldSerializer<T> {
    BoundedCompatible(Kryo k, Class<T> type, CompatibleFieldSerializerConfig config) {
      super(k, type, config);
    }

    @Override
    public T read(Kryo kryo, Input input, Class<? extends T> type) {
      // The names come once per message, the first time this serializer reads (Kryo keeps them
      // in the graph context under the serializer).
      if (kryo.getGraphContext().get(this) == null && input.getInputStream() == null) {
        int start = input.position();
        int names = input.readVarInt(true);
        input.setPosition(start);
        check(input, Integer.toUnsignedLong(names), 1, "a compatible class's field names");
      }
      return super.read(kryo, input, type);
    }
  }

  /**
   * Refuses a declared element count that the bytes left in the input cannot hold.
   *
   * @throws KryoException if {@code count * minBytes} exceeds the remaining bytes
   */
  static void check(Input in, long count, int minBytes, String what) {
    if (in.getInputStream() != null) {
      return;
    }
    long remaining = in.limit() - in.position();
    if (count < 0 || count * minBytes > remaining) {
      throw new KryoException(what + " declares " + count + " elements but only " + remaining
          + " bytes follow (hostile or corrupt declared size)");
    }
  }

  /** Checks the length prefix (count + 1, 0 for null) that Kryo's array serializers write. */
  private static final class BoundedArray<T> extends Serializer<T> {
    private final Serializer<T> inner;
    private final int minBytes;

    BoundedArray(Serializer<T> inner, int minBytes) {
      super(inner.getAcceptsNull(), inner.isImmutable());
      this.inner = inner;
      this.minBytes = minBytes;
    }

    @Override
    public void write(Kryo kryo, Output output, T object) {
      inner.write(kryo, output, object);
    }

    @Override
    public T read(Kryo kryo, Input input, Class<? extends T> type) {
      if (input.getInputStream() == null) {
        int start = input.position();
        int length = input.readVarInt(true);
        if (length != Kryo.NULL) {
          check(input, Integer.toUnsignedLong(length) - 1, minBytes, "an array of " + type.getComponentType().getName());
        }
        input.setPosition(start);
      }
      return inner.read(kryo, input, type);
    }

    @Override
    public T copy(Kryo kryo, T original) {
      return inner.copy(kryo, original);
    }
  }

  /**
   * Kryo's collection serializer, checking the declared size before creating the collection.
   *
   * <p>Kryo writes a collection whose elements are all null as its size and one null class byte,
   * so such a collection may declare more elements than bytes follow. Those extra elements are
   * allowed up to {@value #NULLS_PER_DECODE}, or eight per byte of input if that is more, in all
   * per decoded value (counted in Kryo's graph context, which is cleared after each value):
   * otherwise a few bytes per collection could declare millions of nulls.
   */
  @SuppressWarnings("rawtypes")
  private static final class BoundedCollection extends CollectionSerializer<Collection> {
    @Override
    protected Collection create(Kryo kryo, Input input, Class<? extends Collection> type, int size) {
      if (input.getInputStream() == null && size > input.limit() - input.position() && size >= 0
          && input.position() < input.limit() && input.getBuffer()[input.position()] == Kryo.NULL) {
        chargeNulls(kryo, input, size, type);
      } else {
        check(input, size, 1, "a " + type.getName());
      }
      return super.create(kryo, input, type, size);
    }
  }

  /** How many elements of all-null collections beyond their bytes a decoded value may hold, at least. */
  static final int NULLS_PER_DECODE = 1 << 16;

  private static final String NULLS_KEY = "eyrie.nulls";

  @SuppressWarnings("unchecked")
  private static void chargeNulls(Kryo kryo, Input input, int size, Class<?> type) {
    long inputBytes = input instanceof BoundedInput b ? b.length() : input.limit();
    long budget = Math.max(NULLS_PER_DECODE, 8 * inputBytes);
    Object used = kryo.getGraphContext().get(NULLS_KEY);
    long total = (used == null ? 0L : (Long) used) + size;
    if (total > budget) {
      throw new KryoException("a " + type.getName() + " declares " + size + " elements but only " + budget
          + " null elements in all may outnumber the bytes that encode them (hostile or corrupt declared size)");
    }
    kryo.getGraphContext().put(NULLS_KEY, total);
  }

  /** Kryo's tree set serializer, checking the declared size. */
  @SuppressWarnings("rawtypes")
  private static final class BoundedTreeSet extends DefaultSerializers.TreeSetSerializer {
    @Override
    protected TreeSet create(Kryo kryo, Input input, Class<? extends TreeSet> type, int size) {
      check(input, size, 1, "a " + type.getName());
      return super.create(kryo, input, type, size);
    }
  }

  /** Kryo's map serializer, checking the declared size. */
  @SuppressWarnings("rawtypes")
  private static final class BoundedMap extends MapSerializer<Map> {
    @Override
    protected Map create(Kryo kryo, Input input, Class<? extends Map> type, int size) {
      check(input, size, 1, "a " + type.getName());
      return super.create(kryo, input, type, size);
    }
  }

  /** Kryo's tree map serializer, checking the declared size. */
  @SuppressWarnings("rawtypes")
  private static final class BoundedTreeMap extends DefaultSerializers.TreeMapSerializer {
    @Override
    protected TreeMap create(Kryo kryo, Input input, Class<? extends TreeMap> type, int size) {
      check(input, size, 1, "a " + type.getName());
      return super.create(kryo, input, type, size);
    }
  }
}
