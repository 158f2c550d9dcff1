package io.eyrie.multicast;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

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
 */
public final class CodecRegistry {

  /** The smallest id an application may use. */
  public static final int FIRST_APPLICATION_ID = 100;
  /** The smallest id of Eyrie's modules (such as eyrie-core); eyrie-multicast's own are 10-39. */
  static final int FIRST_MODULE_ID = 40;
  /** eyrie-multicast's own classes beyond its first range (10-39) take ids from here to 99. */
  static final int FIRST_MULTICAST_LATE_ID = 90;

  private static final CodecRegistry EMPTY = new CodecRegistry(new TreeMap<>());

  private final SortedMap<Integer, Class<?>> byId;

  private CodecRegistry(SortedMap<Integer, Class<?>> byId) {
    this.byId = Collections.unmodifiableSortedMap(new TreeMap<>(byId));
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

  /** Two registries are equal when they register the same classes with the same ids. */
  @Override
  public boolean equals(Object o) {
    return o instanceof CodecRegistry r && r.byId.equals(byId);
  }

  @Override
  public int hashCode() {
    return byId.hashCode();
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("CodecRegistry{");
    byId.forEach((id, type) -> sb.append(sb.length() > 14 ? ", " : "").append(id).append('=').append(type.getName()));
    return sb.append('}').toString();
  }

  /** Builds a {@link CodecRegistry}. Not thread-safe. */
  public static final class Builder {
    private final SortedMap<Integer, Class<?>> byId = new TreeMap<>();

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
      if (id < FIRST_APPLICATION_ID) {
        throw new IllegalArgumentException("ids below " + FIRST_APPLICATION_ID + " are reserved: " + id);
      }
      for (Map.Entry<Integer, Class<?>> e : byId.entrySet()) {
        if (e.getValue() == type && e.getKey() != id) {
          throw new IllegalArgumentException(type.getName() + " already registered with id " + e.getKey());
        }
      }
      return put(id, type);
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
          register(id, type);
        }
      });
      return this;
    }

    /** Returns the registry; the builder may go on and build others. */
    public CodecRegistry build() {
      return new CodecRegistry(byId);
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
