package io.eyrie.multicast;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import com.esotericsoftware.kryo.util.Pool;
import io.eyrie.multicast.internal.BoundedInput;
import io.eyrie.multicast.internal.DeclaredSizes;
import io.eyrie.multicast.internal.WireTypes;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.Objects;

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
 *
 * <p>Sizes are bounded the same way. An array, string, collection or map (with Kryo's own
 * serializers) may declare no more elements than the bytes that follow it in the input can hold,
 * counting at least one byte per element (two per {@code char} or {@code short}, four per
 * {@code float}, eight per {@code double}); a larger declared size fails to decode with
 * {@link IllegalArgumentException} before anything is allocated. Without the bound, eight bytes
 * declaring a {@code long[]} of 2^31 elements would make every replica try a 16 GiB allocation;
 * with it, decoding allocates at most a small multiple of the input's length. Serializers the
 * application names itself (with Kryo's {@code @DefaultSerializer} on a registered class, see
 * {@link CodecRegistry}) must bound their own sizes.
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
    this.registry = Objects.requireNonNull(registry, "registry");
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
    int maxId = 99;
    for (Map.Entry<Integer, Class<?>> e : registry.registrations().entrySet()) {
      com.esotericsoftware.kryo.Registration taken = k.getRegistration(e.getKey());
      if (taken != null) {
        // Kryo would silently replace eyrie-multicast's own class, which then no longer encodes.
        throw new IllegalArgumentException("id " + e.getKey() + " of " + e.getValue().getName()
            + " is eyrie-multicast's (" + taken.getType().getName() + ")");
      }
      if (registry.encoding(e.getKey()) == CodecRegistry.Encoding.COMPATIBLE) {
        // Field by field with names; not chunked, so every length read stays bounded (see
        // CodecRegistry.Encoding and DeclaredSizes.compatible).
        k.register(e.getValue(), DeclaredSizes.compatible(k, e.getValue()), e.getKey());
      } else {
        // Kryo's default serializer for the class, or the one its @DefaultSerializer names.
        k.register(e.getValue(), e.getKey());
      }
      maxId = Math.max(maxId, e.getKey());
    }
    DeclaredSizes.install(k, maxId);
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
    return (byte[]) encode(value, true);
  }

  /**
   * How many bytes {@link #encode(Object)} would return, without copying them out: a check
   * that a value can be encoded, and how large it is.
   *
   * @param value a registered object, or null
   * @return the encoded size
   * @throws IllegalArgumentException if the value cannot be encoded
   */
  public int encodedSize(Object value) {
    return (Integer) encode(value, false);
  }

  private Object encode(Object value, boolean bytes) {
    Kryo k = kryos.obtain();
    Output out = outputs.obtain();
    try {
      out.reset();
      k.writeClassAndObject(out, value);
      return bytes ? out.toBytes() : (Object) out.position();
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
   * @throws IllegalArgumentException if the bytes are malformed, trail garbage, name a class
   *     that is not registered, nest too deep, or declare a size larger than the bytes can hold
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
   * @throws IllegalArgumentException if the slice is malformed, trails garbage, names a class
   *     that is not registered, nests too deep, or declares a size larger than the slice can hold
   * @throws VirtualMachineError if the JVM runs out of memory or stack while decoding (Kryo wraps
   *     such errors in exceptions; they are unwrapped, since they depend on the JVM and not on the
   *     bytes, so answering them as malformed input would not be deterministic)
   */
  public Object decode(byte[] bytes, int off, int len) {
    Kryo k = kryos.obtain();
    try {
      Input in = new BoundedInput(bytes, off, len);
      Object v = k.readClassAndObject(in);
      if (in.position() != off + len) {
        throw new IllegalArgumentException((off + len - in.position()) + " trailing bytes");
      }
      return v;
    } catch (RuntimeException e) {
      // A failed read can leave Kryo's graph context half-filled; drop the instance.
      k = newKryo();
      VirtualMachineError vm = vmError(e);
      if (vm != null) {
        throw vm;
      }
      throw new IllegalArgumentException("malformed message: " + reason(e), e);
    } finally {
      kryos.free(k);
    }
  }

  /** The JVM error that Kryo's field and record serializers wrap in a KryoException, if any. */
  private static VirtualMachineError vmError(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof VirtualMachineError vm) {
        return vm;
      }
    }
    return null;
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

  /**
   * Writes an object with its class to a stream: the bytes {@link #encode(Object)} returns, with
   * nothing around them (used by snapshots, which put other fields around the objects). A Kryo
   * {@code Output}, as Eyrie's snapshots use, is written to in place.
   *
   * @param out the stream
   * @param value a registered object, or null
   * @throws RuntimeException if the value cannot be encoded: an {@link IllegalArgumentException}
   *     for a plain stream, Kryo's exception for a Kryo {@code Output} (which may then hold part of
   *     the value)
   * @throws UncheckedIOException if the stream fails
   */
  public void write(OutputStream out, Object value) {
    if (!(out instanceof Output kryoOut)) {
      try {
        out.write(encode(value));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return;
    }
    Kryo k = kryos.obtain();
    try {
      k.writeClassAndObject(kryoOut, value);
    } finally {
      kryos.free(k);
    }
  }

  /**
   * Reads an object written by {@link #write(OutputStream, Object)}, and no byte after it: the
   * stream is left at the first byte that follows the object. A Kryo {@code Input}, as Eyrie's
   * snapshots use, is read in place. Declared sizes are bounded as in {@link #decode(byte[])}
   * when the input is a Kryo {@code Input} over an array, not when it reads from another stream
   * (a snapshot file), whose length is unknown.
   *
   * @param in the stream
   * @return the object
   * @throws RuntimeException (Kryo's exception) if the bytes are malformed or the stream ends or
   *     fails
   */
  public Object read(InputStream in) {
    Input kryoIn = in instanceof Input i ? i : new ExactInput(in);
    Kryo k = kryos.obtain();
    try {
      return k.readClassAndObject(kryoIn);
    } finally {
      kryos.free(k);
    }
  }

  /** Reads from a stream no further than asked: one byte at a time (it buffers no look-ahead). */
  private static final class ExactInput extends Input {
    ExactInput(InputStream in) {
      super(in, 16);
    }

    @Override
    protected int fill(byte[] buffer, int offset, int count) {
      return super.fill(buffer, offset, Math.min(count, 1));
    }
  }
}
