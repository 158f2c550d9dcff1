package io.eyrie.multicast;

/**
 * Told each time a {@link MulticastClient} sends a call again, for monitoring and diagnostics.
 * Called on the client's I/O threads: return quickly and never block.
 */
@FunctionalInterface
public interface ResendListener {

  /** Why an attempt was given up. */
  enum Reason {
    /** The node did not answer within the attempt timeout. */
    ATTEMPT_TIMEOUT,
    /** The connection could not be opened, written to, or was lost. */
    CONNECTION,
    /** The node answered UNAVAILABLE (not the leader, or shutting down). */
    UNAVAILABLE
  }

  /**
   * One attempt of a call was given up and the call will be sent again.
   *
   * @param msgId the multicast's id, or null for a query
   * @param node the node the given-up attempt went to
   * @param attempts how many attempts the call has made so far
   * @param reason why
   */
  void attemptFailed(MsgId msgId, int node, int attempts, Reason reason);
}
