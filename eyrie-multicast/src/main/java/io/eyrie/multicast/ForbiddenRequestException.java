package io.eyrie.multicast;

import java.util.Objects;

/**
 * Thrown by a {@link NodeApp#requiredRole} to refuse one request from one peer, whatever its role:
 * the node answers {@link Status#FORBIDDEN} with {@link #reason()} (after the peer's identity and
 * what it sent) before the request reaches any log, counts the refusal in its endpoint's
 * forbidden total and logs it with the peer. This is how an application authorizes by object
 * (see {@code io.eyrie.core.Service.Builder#authorizer}); the peer is {@link
 * NodeApp#currentPeer()}.
 */
public final class ForbiddenRequestException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the refusal.
   *
   * @param reason why, for the peer: it is sent back in the FORBIDDEN reply
   */
  public ForbiddenRequestException(String reason) {
    super(Objects.requireNonNullElse(reason, "refused by the service"), null, false, false);
  }

  /** Returns why the request is refused. */
  public String reason() {
    return getMessage();
  }
}
