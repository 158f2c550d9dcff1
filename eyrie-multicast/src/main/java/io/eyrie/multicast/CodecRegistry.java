package io.eyrie.multicast;

import com.esotericsoftware.kryo.Serializer;
import java.util.Collections;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The application's classes that may travel in payloads, replies, channel items and snapshots,
 * each with a fixed Kryo registration id.
 *
 * <p>Kryo runs with registration required, so every node and every client of a cluster must use
 * the same registry: a class that is not registered cannot be sent, and a frame that names an
 * unregistered class is refused. Ids below {@link #FIRST_APPLICATION_ID} are reserved for Eyrie.
 *
 * <pre>{@code
 * CodecRegistry reg = CodecRegistry.create()
 *     .register(100, Transfer.class)
 *     .register(101, Balance.class);
 * }</pre>
 */
public final class CodecRegistry {

  /** The smallest id an application may use. */
  public static final int FIRST_APPLICATION_ID = 100;
  /** eyrie-multicast's own classes beyond its first range (10-39) take ids from here to 99. */
  static final int FIRST_MULTICAST_LATE_ID = 90;

  /**
   * One registration.
   *
   * @param type the class
   * @param serializer an explicit serializer, or null for Kryo's default for the class
   */
  public record Registration(Class<?> type, Serializer<?> serializer) {}

  private final SortedMap<Integer, Registration> byId = new TreeMap<>();

  private CodecRegistry() {}

  /** Returns an empty registry. */
  public static CodecRegistry create() {
    return new CodecRegistry();
  }

  /**
   * Registers a class with Kryo's default serializer (records, arrays, enums and plain classes
   * with a no-argument constructor work).
   *
   * @param id the registration id, at least {@link #FIRST_APPLICATION_ID}
   * @param type the class
   * @return this registry
   */
  public CodecRegistry register(int id, Class<?> type) {
    return register(id, type, null);
  }

  /**
   * Registers a class with an explicit serializer.
   *
   * @param id the registration id, at least {@link #FIRST_APPLICATION_ID}
   * @param type the class
   * @param serializer the serializer, or null for the default
   * @return this registry
   */
  public synchronized CodecRegistry register(int id, Class<?> type, Serializer<?> serializer) {
    if (id < FIRST_APPLICATION_ID) {
      throw new IllegalArgumentException("ids below " + FIRST_APPLICATION_ID + " are reserved: " + id);
    }
    Registration prev = byId.get(id);
    if (prev != null && prev.type() != type) {
      throw new IllegalArgumentException("id " + id + " already registered for " + prev.type().getName());
    }
    for (Map.Entry<Integer, Registration> e : byId.entrySet()) {
      if (e.getValue().type() == type && e.getKey() != id) {
        throw new IllegalArgumentException(type.getName() + " already registered with id " + e.getKey());
      }
    }
    byId.put(id, new Registration(type, serializer));
    return this;
  }

  /**
   * Registers one of Eyrie's own classes (ids 40 to 89, reserved for Eyrie's modules such as
   * eyrie-core; eyrie-multicast's own classes take 10 to 39 and 90 to 99; applications use
   * {@link #register(int, Class)}).
   *
   * @param id the registration id, 40 to 89
   * @param type the class
   * @return this registry
   */
  public synchronized CodecRegistry registerEyrie(int id, Class<?> type) {
    if (id < 40 || id >= FIRST_MULTICAST_LATE_ID) {
      throw new IllegalArgumentException("Eyrie's module ids are 40 to 89: " + id);
    }
    Registration prev = byId.get(id);
    if (prev != null && prev.type() != type) {
      throw new IllegalArgumentException("id " + id + " already registered for " + prev.type().getName());
    }
    byId.put(id, new Registration(type, null));
    return this;
  }

  /**
   * Adds every registration of another registry.
   *
   * @param other the registry to include
   * @return this registry
   */
  public CodecRegistry include(CodecRegistry other) {
    other.registrations().forEach((id, r) -> {
      if (id < FIRST_APPLICATION_ID) {
        registerEyrie(id, r.type());
      } else {
        register(id, r.type(), r.serializer());
      }
    });
    return this;
  }

  /** Returns the registrations by id. */
  public synchronized SortedMap<Integer, Registration> registrations() {
    return Collections.unmodifiableSortedMap(new TreeMap<>(byId));
  }
}
