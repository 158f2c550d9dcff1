package io.eyrie.multicast.internal;

import io.eyrie.multicast.Status;

/**
 * The fixed codes of the {@link Status}es in client frames ({@link WireTypes}) and snapshots, the
 * one place that maps them. The codes are those of the int statuses they replaced, so frames and
 * snapshots keep their bytes; a code is never reused for another status.
 */
public final class StatusCodes {
  private StatusCodes() {}

  /** Returns the code of a status. */
  public static int code(Status s) {
    return switch (s) {
      case OK -> 0;
      case ERROR -> 1;
      case UNAVAILABLE -> 2;
      case BAD_REQUEST -> 3;
      case STALE -> 4;
      case EXPIRED -> 5;
      case FORBIDDEN -> 6;
    };
  }

  /**
   * Returns the status of a code.
   *
   * @throws IllegalArgumentException if no status has that code
   */
  public static Status status(int code) {
    for (Status s : Status.values()) {
      if (code(s) == code) {
        return s;
      }
    }
    throw new IllegalArgumentException("unknown status code " + code);
  }
}
