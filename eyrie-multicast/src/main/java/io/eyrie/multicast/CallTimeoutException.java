package io.eyrie.multicast;

import java.util.concurrent.TimeoutException;

/**
 * A call got no definite answer: the outcome is unknown (the multicast may or may not have been,
 * or may still be, delivered). Thrown after the client's total timeout, and as its subclass
 * {@link ClientExpiredException} when the reply group forgot the client. Carries the multicast's
 * {@link MsgId}, so that a caller can look it up in the nodes' state or logs.
 */
public class CallTimeoutException extends TimeoutException {
  private static final long serialVersionUID = 1L;

  private final transient MsgId msgId;

  /**
   * Creates the exception. Clients create these when they decide an outcome is unknown: the
   * multicast client for one call, the DS-SMR client proxy for a whole command.
   *
   * @param msgId the multicast's id, or null (a query, or a command of several multicasts)
   * @param message what had no outcome, and for how long
   */
  public CallTimeoutException(MsgId msgId, String message) {
    super(message);
    this.msgId = msgId;
  }

  /** Returns the multicast's id, or null if the call was a query. */
  public MsgId msgId() {
    return msgId;
  }
}
