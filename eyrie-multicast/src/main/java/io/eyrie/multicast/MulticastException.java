package io.eyrie.multicast;

/**
 * A definite refusal or failure reported by the cluster for a multicast or a query: the request
 * was malformed, the application failed, or the command is stale (its sequence number is below
 * the client's watermark). Unlike a {@link java.util.concurrent.TimeoutException}, the outcome is
 * known: the cluster answered with a status other than OK. The status {@link Status#EXPIRED} is
 * the exception: it does not tell the outcome, and calls answered with it fail with a
 * {@link ClientExpiredException} (a {@link CallTimeoutException}) instead.
 */
public class MulticastException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final Status status;

  /**
   * Creates the exception.
   *
   * @param status the reply status the cluster answered with
   * @param message the cluster's explanation
   */
  public MulticastException(Status status, String message) {
    super(status + ": " + message);
    this.status = status;
  }

  /**
   * Returns the reply status: {@link Status#ERROR}, {@link Status#BAD_REQUEST},
   * {@link Status#STALE} or another one than OK.
   */
  public Status status() {
    return status;
  }
}
