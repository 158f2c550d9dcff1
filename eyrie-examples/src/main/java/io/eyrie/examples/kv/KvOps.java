package io.eyrie.examples.kv;

/** The key-value store's operations; a command's objects are the keys it touches. */
public final class KvOps {
  private KvOps() {}

  /** Reads the target key; replies its value. */
  public record Get() {}

  /** Writes the target key; replies the previous value. */
  public record Put(String value) {}

  /** Copies one key's value to another (a command on both keys: Eyrie gathers them); replies the value. */
  public record Copy(long from, long to) {}
}
