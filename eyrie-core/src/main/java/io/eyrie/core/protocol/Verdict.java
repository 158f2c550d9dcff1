package io.eyrie.core.protocol;

import io.eyrie.multicast.GroupId;

/**
 * Channel item: the oracle's verdict on a create or delete, where the object is (or goes), and
 * for a REFUSED verdict why (the application's exception, at most {@link #REASON_MAX} chars).
 */
public record Verdict(Status status, GroupId location, String reason) {
  /** The longest reason a verdict carries. */
  public static final int REASON_MAX = 300;

  /** What the oracle decided. */
  public enum Status {
    /** The map changed: the object is placed at {@code location}, or removed from it. */
    OK,
    /** Nothing to do: a create's object exists already (at {@code location}), or a delete's is missing. */
    NOK,
    /** The command's view is stale (a retired partition, a partition it missed, the object elsewhere): ask again. */
    RETRY,
    /** The command was refused ({@code reason} says why) and the map did not change. */
    REFUSED
  }

  /** A verdict without a reason. */
  public Verdict(Status status, GroupId location) {
    this(status, location, null);
  }
}
