package io.eyrie.core;

import io.eyrie.multicast.Identity;
import java.util.Objects;

/**
 * Decides, per command, whether a peer may run it: the application's authorization by object, set
 * with {@link Service.Builder#authorizer}. It sees who sends (the {@link Identity} of the peer's
 * certificate: its name and role) and the decoded {@link Command}: its kind, the application's
 * operation ({@link Command#op()}) and the objects it touches ({@link Command#objects()}).
 *
 * <p><b>Where and when.</b> On a node whose client port runs mutual TLS, the node that receives a
 * client's request calls the hook before the request is submitted to any log, on the endpoint's
 * threads: it must be quick and must not block. A denial is answered {@code FORBIDDEN} with the
 * reason ({@code forbidden: identity app (client) may not multicast AccessReq: <reason>}), logged
 * with the peer's identity and counted in the node's {@code eyrie_endpoint_forbidden_total}; the
 * client's call fails with a {@link io.eyrie.multicast.MulticastException} of status {@code
 * FORBIDDEN}, and nothing of the command runs. A hook that throws (any Throwable) or returns
 * null denies; one that throws {@link io.eyrie.multicast.ForbiddenRequestException} denies with
 * that exception's reason.
 *
 * <p>It is called for every request that carries an application command from a {@code client}
 * or {@code admin} identity: the consultation of the oracle, the command itself sent to its
 * partitions, a read-only command, a create and a delete. One command may therefore be judged
 * more than once (at the oracle and at its partitions, and again when resent), so the decision
 * must depend on the peer and the command only. It is not called for a {@code node} identity
 * (a node replicates every command and may send everything), nor for Eyrie's own requests
 * (moves, partition changes, statistics; {@link Service#requiredRole} governs those), and not at
 * all without TLS: a node without TLS knows no identity and lets everyone send everything.
 */
@FunctionalInterface
public interface CommandAuthorizer {

  /**
   * Decides whether {@code peer} may run {@code command}.
   *
   * @param peer the identity of the peer's certificate: never null, never a {@code node}
   * @param command the decoded command, as the client proxy sent it
   * @return {@link Decision#allow()} or {@link Decision#deny(String)}; null denies
   */
  Decision authorize(Identity peer, Command command);

  /**
   * A decision: allowed, or denied with a reason sent back to the peer.
   *
   * @param allowed whether the command may run
   * @param reason why it may not (null if allowed)
   */
  record Decision(boolean allowed, String reason) {
    private static final Decision ALLOW = new Decision(true, null);

    /** Checks that a denial has a reason. */
    public Decision {
      if (!allowed) {
        Objects.requireNonNull(reason, "a denial needs a reason");
      }
    }

    /**
     * Returns the decision that lets the command run.
     *
     * @return the allowing decision
     */
    public static Decision allow() {
      return ALLOW;
    }

    /**
     * Returns a denial.
     *
     * @param reason why, for the peer (it is sent back with {@code FORBIDDEN}; say nothing the
     *     peer must not learn)
     * @return the denial
     */
    public static Decision deny(String reason) {
      return new Decision(false, reason);
    }
  }
}
