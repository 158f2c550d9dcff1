package io.eyrie.multicast;

import java.util.Objects;

/**
 * The name of one replicated group (one Raft group): a partition or the oracle.
 *
 * <p>Group ids are ordered by name; the order is used wherever replicas must agree on an
 * iteration order, so it is part of the protocol.
 */
public record GroupId(String name) implements Comparable<GroupId> {

  /** Validates the name: 1 to 64 characters from {@code [A-Za-z0-9_-]}. */
  public GroupId {
    Objects.requireNonNull(name, "name");
    if (!valid(name)) {
      throw new IllegalArgumentException("invalid group name: '" + name + "'");
    }
  }

  private static boolean valid(String name) {
    if (name.isEmpty() || name.length() > 64) {
      return false;
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (!(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-')) {
        return false;
      }
    }
    return true;
  }

  /**
   * Returns the group id with the given name.
   *
   * @param name the group's name, for example {@code "p0"} or {@code "oracle"}
   * @return the id
   */
  public static GroupId valueOf(String name) {
    return new GroupId(name);
  }

  @Override
  public int compareTo(GroupId o) {
    return name.compareTo(o.name);
  }

  @Override
  public String toString() {
    return name;
  }
}
