package io.eyrie.multicast;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The application's classes that may travel in payloads, replies, channel items and snapshots,
 * each with a fixed registration id. Immutable: a {@link Builder} makes one, and
 * {@link #toBuilder()} starts another from it.
 *
 * <p>Kryo runs with registration required, so every node and every client of a cluster must use
 * the same registry: a class that is not registered cannot be sent, and a frame that names an
 * unregistered class is refused. Ids below {@link #FIRST_APPLICATION_ID} are reserved for Eyrie.
 *
 * <pre>{@code
 * CodecRegistry reg = CodecRegistry.newBuilder()
 *     .register(100, Transfer.class)
 *     .register(101, Balance.class)
 *     .build();
 * }</pre>
 *
 * <p>A class is encoded with Kryo's default serializer for it (records, arrays, enums and plain
 * classes with a no-argument constructor work). A class that needs its own encoding names its
 * serializer with Kryo's {@code @DefaultSerializer} annotation; such a serializer must bound the
 * sizes it reads itself (see {@link Codec}).
 *
 * <p><b>Classes that evolve.</b> Kryo's default encoding of a plain class writes its fields in a
 * fixed order without their names, so a class whose fields change can no longer read what the
 * old class wrote. A class registered with {@link Encoding#COMPATIBLE} ({@link
 * Builder#register(int, Class, Encoding)}) is written with its fields' names, so the release that
 * adds a field reads the older objects (the field keeps the value the no-argument constructor
 * gives it) and the older release reads the newer ones (it skips the field): the rolling-upgrade
 * promise of docs/design.md, 4.7.1.
 */
public final class CodecRegistry {

  /** The smallest id an application may use. */
  public static final int FIRST_APPLICATION_ID = 100;
  /** The smallest id of Eyrie's modules (such as eyrie-core); eyrie-multicast's own are 10-39. */
  static final int FIRST_MODULE_ID = 40;
  /** eyrie-multicast's own classes beyond its first range (10-39) take ids from here to 99. */
  static final int FIRST_MULTICAST_LATE_ID = 90;

  /**
   * How a registered class is encoded.
   *
   * <p>{@link #COMPATIBLE} uses Kryo's {@code CompatibleFieldSerializer} rather than its
   * {@code TaggedFieldSerializer}: it needs no annotation on every field (a forgotten
   * {@code @Tag} would silently leave a field out), and it copes with a field added and a field
   * removed alike. Its cost is the fields' names, written once per message for each compatible
   * class in it, and each field's class before its value. Chunked encoding is off: its
   * streaming input would escape the size bounds {@link Codec} puts on every decoded length. So
   * the older release skips an unknown field by reading its value: <b>a field added in release
   * N+1 must be of a type that release N can decode</b> (a JDK type Eyrie registers, or an
   * application class N already registers; register a new class one release before a field of
   * it appears). A removed field's value is read and dropped the same way. Nor may an added or
   * removed field be a generic collection or map ({@code List<String>}): Kryo writes its elements
   * by the declared element type, which the release without the field does not know; put such a
   * collection in a class of its own, registered in both releases, and add a field of that.
   */
  public enum Encoding {
    /**
     * Kryo's default serializer for the class: compact, but a plain class's fields are written in
     * order without names, so they must never change. Records, enums and arrays use it.
     */
    DEFAULT,
    /**
     * Field by field with the fields' names (Kryo's {@code CompatibleFieldSerializer}), for a
     * plain class with a no-argument constructor whose fields may be added or removed between
     * releases. Not for records, enums, arrays or interfaces.
     */
    COMPATIBLE
  }

  private static final CodecRegistry EMPTY = new CodecRegistry(new TreeMap<>(), new TreeSet<>());

  private final SortedMap<Integer, Class<?>> byId;
  private final SortedSet<Integer> compatible;

  private CodecRegistry(SortedMap<Integer, Class<?>> byId, SortedSet<Integer> compatible) {
    this.byId = Collections.unmodifiableSortedMap(new TreeMap<>(byId));
    this.compatible = Collections.unmodifiableSortedSet(new TreeSet<>(compatible));
  }

  /** Returns a builder of a registry, empty. */
  public static Builder newBuilder() {
    return new Builder();
  }

  /** Returns the registry without any class: Eyrie's own wire types only. */
  public static CodecRegistry empty() {
    return EMPTY;
  }

  /**
   * Returns a builder holding this registry's classes, to make a registry with more. This
   * registry does not change.
   *
   * @return a new builder
   */
  public Builder toBuilder() {
    return new Builder().include(this);
  }

  /** Returns the registered classes by id (unmodifiable). */
  public SortedMap<Integer, Class<?>> registrations() {
    return byId;
  }

  /**
   * Returns how the class registered with an id is encoded.
   *
   * @param id a registration id
   * @return its encoding ({@link Encoding#DEFAULT} for an id that is not registered)
   */
  public Encoding encoding(int id) {
    return compatible.contains(id) ? Encoding.COMPATIBLE : Encoding.DEFAULT;
  }

  /**
   * Two registries are equal when they register the same classes with the same ids and
   * encodings.
   */
  @Override
  public boolean equals(Object o) {
    return o instanceof CodecRegistry r && r.byId.equals(byId) && r.compatible.equals(compatible);
  }

  @Override
  public int hashCode() {
    return byId.hashCode() * 31 + compatible.hashCode();
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("CodecRegistry{");
    byId.forEach((id, type) -> sb.append(sb.length() > 14 ? ", " : "").append(id).append('=').append(type.getName())
        .append(compatible.contains(id) ? " (compatible)" : ""));
    return sb.append('}').toString();
  }

  /** Builds a {@link CodecRegistry}. Not thread-safe. */
  public static final class Builder {
    private final SortedMap<Integer, Class<?>> byId = new TreeMap<>();
    private final SortedSet<Integer> compatible = new TreeSet<>();

    private Builder() {}

    /**
     * Registers a class.
     *
     * @param id the registration id, at least {@link #FIRST_APPLICATION_ID}; it is the wire and
     *     snapshot format, so never renumber a class, only add new ones
     * @param type the class
     * @return this builder
     * @throws IllegalArgumentException if the id is reserved, holds another class already, or
     *     the class has another id already
     */
    public Builder register(int id, Class<?> type) {
      return register(id, type, Encoding.DEFAULT);
    }

    /**
     * Registers a class with an encoding: {@link Encoding#COMPATIBLE} for a class whose fields
     * may change between releases (see {@link Encoding}).
     *
     * @param id the registration id, at least {@link #FIRST_APPLICATION_ID}; it is the wire and
     *     snapshot format, so never renumber a class, only add new ones
     * @param type the class
     * @param encoding how its objects are encoded; never change it for a registered class
     * @return this builder
     * @throws IllegalArgumentException if the id is reserved, holds another class (or the same
     *     with another encoding) already, the class has another id already, or the encoding is
     *     {@link Encoding#COMPATIBLE} and the class is not a plain class with a no-argument
     *     constructor
     */
    public Builder register(int id, Class<?> type, Encoding encoding) {
      Objects.requireNonNull(type, "type");
      Objects.requireNonNull(encoding, "encoding");
      if (id < FIRST_APPLICATION_ID) {
        throw new IllegalArgumentException("ids below " + FIRST_APPLICATION_ID + " are reserved: " + id);
      }
      for (Map.Entry<Integer, Class<?>> e : byId.entrySet()) {
        if (e.getValue() == type && e.getKey() != id) {
          throw new IllegalArgumentException(type.getName() + " already registered with id " + e.getKey());
        }
      }
      if (encoding == Encoding.COMPATIBLE) {
        checkCompatible(type);
      }
      if (byId.get(id) == type && compatible.contains(id) != (encoding == Encoding.COMPATIBLE)) {
        throw new IllegalArgumentException(type.getName() + " already registered with id " + id
            + " and the other encoding");
      }
      put(id, type);
      if (encoding == Encoding.COMPATIBLE) {
        compatible.add(id);
      }
      return this;
    }

    /** A compatible class must be one Kryo's field serializer can create and fill. */
    private static void checkCompatible(Class<?> type) {
      if (type.isRecord() || type.isEnum() || type.isArray() || type.isInterface() || type.isPrimitive()
          || java.lang.reflect.Modifier.isAbstract(type.getModifiers())) {
        throw new IllegalArgumentException("the compatible encoding is for plain classes, not " + type.getName()
            + " (records, enums, arrays, interfaces and abstract classes keep the default)");
      }
      try {
        type.getDeclaredConstructor();
      } catch (NoSuchMethodException e) {
        throw new IllegalArgumentException("the compatible encoding needs a no-argument constructor: "
            + type.getName(), e);
      }
    }

    /**
     * Eyrie's own: registers a class of one of Eyrie's modules, such as eyrie-core, with an id
     * from 40 to 89. Not for applications, which use {@link #register(int, Class)}: these ids
     * are shared by Eyrie's modules, and a class here would collide with one of theirs. (It is
     * public because eyrie-core, another module, calls it.)
     *
     * @param id the registration id, 40 to 89
     * @param type the class
     * @return this builder
     * @throws IllegalArgumentException if the id is outside 40 to 89 or holds another class
     */
    public Builder registerEyrie(int id, Class<?> type) {
      if (id < FIRST_MODULE_ID || id >= FIRST_MULTICAST_LATE_ID) {
        throw new IllegalArgumentException("Eyrie's module ids are " + FIRST_MODULE_ID + " to "
            + (FIRST_MULTICAST_LATE_ID - 1) + ": " + id);
      }
      return put(id, type);
    }

    /**
     * Adds every class of a registry, with the same checks as registering them one by one.
     *
     * @param other the registry to include
     * @return this builder
     * @throws IllegalArgumentException if an id of {@code other} holds another class here, or one
     *     of its classes has another id here
     */
    public Builder include(CodecRegistry other) {
      other.byId.forEach((id, type) -> {
        if (id < FIRST_APPLICATION_ID) {
          registerEyrie(id, type);
        } else {
          register(id, type, other.encoding(id));
        }
      });
      return this;
    }

    /** Returns the registry; the builder may go on and build others. */
    public CodecRegistry build() {
      return new CodecRegistry(byId, compatible);
    }

    private Builder put(int id, Class<?> type) {
      Objects.requireNonNull(type, "type");
      Class<?> prev = byId.get(id);
      if (prev != null && prev != type) {
        throw new IllegalArgumentException("id " + id + " already registered for " + prev.getName());
      }
      byId.put(id, type);
      return this;
    }
  }
}
