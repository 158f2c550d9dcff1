package io.eyrie.multicast;

import io.eyrie.multicast.internal.state.GroupState;

/**
 * A definite refusal or failure reported by the cluster for a multicast or a query: the request
 * was malformed, the application failed, or the command is stale (its sequence number is below
 * the client's watermark). Unlike a {@link java.util.concurrent.TimeoutException}, the outcome is
 * known: the cluster answered with a status other than OK. The status {@link #EXPIRED} is the
 * exception: it does not tell the outcome, and calls answered with it fail with a
 * {@link ClientExpiredException} (a {@link CallTimeoutException}) instead.
 */
public class MulticastException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** The request was refused as invalid. */
  public static final int BAD_REQUEST = GroupState.BAD_REQUEST;
  /** The request failed while being handled. */
  public static final int ERROR = GroupState.ERROR;
  /** The command's sequence number is below the client's watermark. */
  public static final int STALE = GroupState.STALE;
  /**
   * The reply group forgot the client (idle there longer than the cluster keeps records) and
   * cannot tell whether it executed the message: an unknown outcome, reported as
   * {@link ClientExpiredException}, never as a {@code MulticastException}.
   */
  public static final int EXPIRED = GroupState.EXPIRED;

  private final int status;

  /**
   * Creates the exception.
   *
   * @param status the reply status the cluster answered with
   * @param message the cluster's explanation
   */
  public MulticastException(int status, String message) {
    super(statusName(status) + ": " + message);
    this.status = status;
  }

  /** Returns the reply status: {@link #ERROR}, {@link #BAD_REQUEST}, {@link #STALE} or another non-OK code. */
  public int status() {
    return status;
  }

  /**
   * Returns a readable name for a reply status.
   *
   * @param status the status code
   * @return its name, or {@code status N} if it is unknown
   */
  public static String statusName(int status) {
    return switch (status) {
      case GroupState.OK -> "OK";
      case ERROR -> "ERROR";
      case GroupState.UNAVAILABLE -> "UNAVAILABLE";
      case BAD_REQUEST -> "BAD_REQUEST";
      case STALE -> "STALE";
      case EXPIRED -> "EXPIRED";
      default -> "status " + status;
    };
  }
}
