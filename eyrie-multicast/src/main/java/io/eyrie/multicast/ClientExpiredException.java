package io.eyrie.multicast;

/**
 * The reply group answered EXPIRED: it dropped this client's records (the client was idle there
 * for longer than the cluster's expiry time) and cannot tell whether it executed the message. The
 * outcome is unknown, as after a timeout: another destination may have made the message run (it
 * proposed it before or after the refused attempt), so the caller must not treat the call as
 * failed. A group refuses this way only messages whose sequence number it had seen before the
 * expiry, i.e. resends; a new message of the same client is accepted, so the client need not be
 * replaced.
 */
public final class ClientExpiredException extends CallTimeoutException {
  private static final long serialVersionUID = 1L;

  ClientExpiredException(MsgId msgId, String message) {
    super(msgId, message);
  }
}
