package io.eyrie.multicast;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import com.esotericsoftware.kryo.util.Pool;
import io.eyrie.multicast.internal.WireTypes;
import java.util.Map;

/**
 * Thread-safe Kryo encoding of Eyrie's wire types and the application's registered classes.
 *
 * <p>Registration is required: encoding an unregistered class fails with
 * {@link IllegalArgumentException}, and decoding bytes that are malformed or name an unknown
 * class fails with {@link IllegalArgumentException}; neither leaves the codec in a bad state.
 *
 * <p>Objects may nest at most {@link #MAX_DEPTH} levels deep (each object inside another, a
 * record's component or a collection's element, is one level). Deeper values fail to encode and
 * deeper input fails to decode with {@link IllegalArgumentException}: without the bound, a small
 * malicious payload of nested collections would overflow the stack of the thread that applies
 * the log, and a stack overflow cannot be answered deterministically (where it happens depends on
 * the replica's stack and JIT), so it would stop every replica.
 */
public final class Codec {
  /** How deep objects may nest in encoded values. */
  public static final int MAX_DEPTH = 100;

  private final CodecRegistry registry;
  private final Pool<Kryo> kryos;
  private final Pool<Output> outputs;

  /**
   * Creates a codec.
   *
   * @param registry the application's classes (may be empty)
   */
  public Codec(CodecRegistry registry) {
    this.registry = registry;
    this.kryos = new Pool<>(true, false, 64) {
      @Override
      protected Kryo create() {
        return newKryo();
      }
    };
    this.outputs = new Pool<>(true, false, 64) {
      @Override
      protected Output create() {
        return new Output(1024, -1);
      }
    };
  }

  /** Returns the registry this codec was built from. */
  public CodecRegistry registry() {
    return registry;
  }

  private Kryo newKryo() {
    Kryo k = new Kryo();
    k.setRegistrationRequired(true);
    k.setReferences(false);
    k.setMaxDepth(MAX_DEPTH);
    WireTypes.register(k);
    for (Map.Entry<Integer, CodecRegistry.Registration> e : registry.registrations().entrySet()) {
      if (e.getValue().serializer() != null) {
        k.register(e.getValue().type(), e.getValue().serializer(), e.getKey());
      } else {
        k.register(e.getValue().type(), e.getKey());
      }
    }
    return k;
  }

  /**
   * Encodes an object (with its class) to bytes.
   *
   * @param value a registered object, or null
   * @return the bytes
   * @throws IllegalArgumentException if the class (or a class inside it) is not registered
   */
  public byte[] encode(Object value) {
    Kryo k = kryos.obtain();
    Output out = outputs.obtain();
    try {
      out.reset();
      k.writeClassAndObject(out, value);
      return out.toBytes();
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("cannot encode " + (value == null ? "null" : value.getClass().getName())
          + ": " + reason(e), e);
    } finally {
      if (out.getBuffer().length > 1 << 20) {
        out.setBuffer(new byte[1024], -1);
      }
      outputs.free(out);
      kryos.free(k);
    }
  }

  /**
   * Decodes bytes written by {@link #encode(Object)}.
   *
   * @param bytes the bytes
   * @return the object
   * @throws IllegalArgumentException if the bytes are malformed, trail garbage, or name a class
   *     that is not registered
   */
  public Object decode(byte[] bytes) {
    return decode(bytes, 0, bytes.length);
  }

  /**
   * Decodes a slice written by {@link #encode(Object)}.
   *
   * @param bytes the buffer
   * @param off the slice's start
   * @param len the slice's length
   * @return the object
   * @throws IllegalArgumentException if the slice is malformed, trails garbage, or names a class
   *     that is not registered
   */
  public Object decode(byte[] bytes, int off, int len) {
    Kryo k = kryos.obtain();
    try {
      Input in = new Input(bytes, off, len);
      Object v = k.readClassAndObject(in);
      if (in.position() != off + len) {
        throw new IllegalArgumentException((off + len - in.position()) + " trailing bytes");
      }
      return v;
    } catch (RuntimeException e) {
      // A failed read can leave Kryo's graph context half-filled; drop the instance.
      k = newKryo();
      throw new IllegalArgumentException("malformed message: " + reason(e), e);
    } finally {
      kryos.free(k);
    }
  }

  private static String reason(RuntimeException e) {
    String m = e.getMessage();
    if (e instanceof KryoException && m != null && m.startsWith("Max depth exceeded")) {
      return "objects nested deeper than " + MAX_DEPTH + " levels";
    }
    return m;
  }

  /**
   * Decodes and checks the type.
   *
   * @param bytes the bytes
   * @param type the expected class
   * @param <T> the expected type
   * @return the object
   * @throws IllegalArgumentException if decoding fails or the object has another type
   */
  public <T> T decode(byte[] bytes, Class<T> type) {
    Object v = decode(bytes);
    if (v != null && !type.isInstance(v)) {
      throw new IllegalArgumentException("expected " + type.getSimpleName() + ", got " + v.getClass().getSimpleName());
    }
    return type.cast(v);
  }

  /** Writes an object with its class to a Kryo output (used by snapshots). */
  public void write(Output out, Object value) {
    Kryo k = kryos.obtain();
    try {
      k.writeClassAndObject(out, value);
    } finally {
      kryos.free(k);
    }
  }

  /** Reads an object written by {@link #write(Output, Object)}. */
  public Object read(Input in) {
    Kryo k = kryos.obtain();
    try {
      return k.readClassAndObject(in);
    } finally {
      kryos.free(k);
    }
  }
}
