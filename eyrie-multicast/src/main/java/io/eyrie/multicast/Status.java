package io.eyrie.multicast;

/**
 * How the cluster answered a multicast or a query. Only {@link #OK} comes with the reply; every
 * other status says why there is none. Clients see the statuses other than OK, UNAVAILABLE and
 * EXPIRED as {@link MulticastException#status()}: UNAVAILABLE is resent elsewhere, and EXPIRED
 * is an unknown outcome ({@link ClientExpiredException}).
 */
public enum Status {
  /** The request was handled; the reply is its answer. */
  OK,
  /** The request failed while being handled: the application failed, or a query was refused. */
  ERROR,
  /** The node cannot handle the request now (it does not lead the group, or it is stopping). */
  UNAVAILABLE,
  /** The request was refused as invalid. */
  BAD_REQUEST,
  /**
   * The request was refused because the identity that sent it (the certificate of its mutual-TLS
   * connection) may not send it: a {@code client} sent what needs the {@code admin} role, for
   * example. Never stored in a log: the node refuses the request before submitting it.
   */
  FORBIDDEN,
  /** The command's sequence number is below the client's watermark. */
  STALE,
  /**
   * The reply group forgot the client (idle there longer than the cluster keeps records) and
   * cannot tell whether it executed the message: an unknown outcome, reported as
   * {@link ClientExpiredException}, never as a {@code MulticastException}.
   */
  EXPIRED
}
