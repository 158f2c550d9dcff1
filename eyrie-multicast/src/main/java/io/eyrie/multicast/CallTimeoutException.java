package io.eyrie.multicast;

import java.util.concurrent.TimeoutException;

/**
 * A call got no definite answer within the client's total timeout: the outcome is unknown (the
 * multicast may or may not have been, or may still be, delivered). Carries the multicast's
 * {@link MsgId}, so that a caller can look it up in the nodes' state or logs.
 */
public final class CallTimeoutException extends TimeoutException {
  private static final long serialVersionUID = 1L;

  private final transient MsgId msgId;

  CallTimeoutException(MsgId msgId, String message) {
    super(message);
    this.msgId = msgId;
  }

  /** Returns the multicast's id, or null if the call was a query. */
  public MsgId msgId() {
    return msgId;
  }
}
