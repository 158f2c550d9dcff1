package io.eyrie.core;

/**
 * The identity of a partitioned object ({@link PRObject}). Ordered by value; the order is used
 * wherever replicas must agree on an iteration order.
 */
public record ObjId(long value) implements Comparable<ObjId> {

  /**
   * Returns the id with the given value.
   *
   * @param value the id's value
   * @return the id
   */
  public static ObjId valueOf(long value) {
    return new ObjId(value);
  }

  @Override
  public int compareTo(ObjId o) {
    return Long.compare(value, o.value);
  }

  @Override
  public String toString() {
    return "#" + value;
  }
}
