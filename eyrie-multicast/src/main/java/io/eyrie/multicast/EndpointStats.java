package io.eyrie.multicast;

/**
 * What a node's client endpoint has refused or held back since the node started: each of the
 * connection limits of {@link NodeOptions} counts here when it fires (see {@link Node#endpointStats()}).
 *
 * @param connections client connections open now (a gauge)
 * @param heldRequests requests the endpoint holds now, being worked on or read but waiting for
 *     a connection's in-flight bound (a gauge)
 * @param refusedNodeCap connections closed at accept because the node had
 *     {@link NodeOptions#maxClientConnections()} open
 * @param refusedAddressCap connections closed at accept because their remote address had
 *     {@link NodeOptions#maxClientConnectionsPerAddress()} open
 * @param frameTimeouts connections closed because they held a started frame for
 *     {@link NodeOptions#frameIdleTimeoutMs()} without sending a byte of it
 * @param oversizedFrames connections closed for a frame longer than {@link NodeOptions#maxFrameBytes()}
 * @param malformedFrames connections closed for a frame that does not decode
 * @param readPauses times a connection reached {@link NodeOptions#maxInFlightPerConnection()}
 *     and the node stopped reading it until some of its requests were answered
 * @param busyReplies requests answered UNAVAILABLE ("busy") because the node had
 *     {@link NodeOptions#maxPendingRequests()} requests unanswered
 * @param tlsHandshakeTimeouts TLS connections closed because their handshake took longer than
 *     {@link NodeOptions#tlsHandshakeTimeoutMs()}
 * @param tlsHandshakeFailures TLS handshakes refused: no client certificate, one from another CA
 *     or expired, plaintext, or a certificate that names no identity
 * @param forbidden requests refused {@link Status#FORBIDDEN} because the peer's role may not send
 *     them (see {@link NodeApp#requiredRole})
 */
public record EndpointStats(long connections, long heldRequests, long refusedNodeCap, long refusedAddressCap,
    long frameTimeouts, long oversizedFrames, long malformedFrames, long readPauses, long busyReplies,
    long tlsHandshakeTimeouts, long tlsHandshakeFailures, long forbidden) {}
