package io.eyrie.multicast;

/**
 * The numbers a running {@link Node} reports about itself: one group replica's counters
 * ({@link Node#stats}), what the node sent to groups ({@link Node#traffic}), and what its client
 * endpoint refused or held back ({@link Node#endpointStats}), and what its Raft port refused
 * ({@link Node#raftPortStats}). {@code eyrie status} and
 * {@code /metrics} show them; each is a snapshot taken when asked.
 */
public final class NodeStats {

  private NodeStats() {}

  /**
   * Counters of one group replica. The first eight are part of the replicated state (equal on
   * every replica that applied the same log); the rest are local.
   *
   * @param entries log entries applied (start batches and channel batches)
   * @param delivered messages delivered
   * @param deliveredMulti delivered messages with more than one destination
   * @param executed messages whose execution finished
   * @param parks executions that had to wait for other groups
   * @param duplicates starts recognized as duplicates (exactly-once at work)
   * @param itemsSent channel items appended to outboxes
   * @param itemsReceived channel items applied from other groups
   * @param pending messages known but not yet delivered
   * @param queued delivered messages not yet executed
   * @param snapshotsTaken snapshots this replica wrote
   * @param snapshotsLoaded snapshots this replica loaded from its own storage
   * @param snapshotsInstalled snapshots a leader installed on this replica to let it catch up
   */
  public record Group(long entries, long delivered, long deliveredMulti, long executed, long parks,
      long duplicates, long itemsSent, long itemsReceived, int pending, int queued, long snapshotsTaken,
      long snapshotsLoaded, long snapshotsInstalled) {}

  /**
   * What a node has sent to Ratis groups since it started: the cost side of the multicast.
   *
   * @param startEntries log entries of client starts submitted
   * @param starts client starts submitted (many per entry under load)
   * @param channelBatches channel batches sent (Ratis requests)
   * @param channelItems channel items sent (many per batch under load)
   * @param channelBytes encoded bytes of the requests that carried channel batches
   * @param channelBacklog items in the outboxes of the channels this node sends (those of the
   *     groups it leads) that their receivers have not acknowledged yet: a gauge, not a counter
   * @param logEntries Ratis requests sent to groups' logs (each one log entry): start entries plus
   *     channel batches
   * @param startFailures starts whose submission to a group failed for good (the group had no
   *     leader for longer than the Ratis client's retries, or refused the entry); a start to a
   *     group other than its reply group is submitted again while a client still waits for it
   * @param localWrites of the log entries, those handed straight to this node's own replica
   *     because it led the group ({@link NodeOptions#localSubmit()}), without a client RPC
   * @param peerQuestions unlogged questions (components pushed and pulled, and the reply gate's
   *     {@code StartedQuery}s) this node put to other nodes' replicas of groups it does not lead
   * @param peerFallbacks of those, the ones the node-to-node link did not answer and that went as a
   *     Ratis read instead
   */
  public record Traffic(long startEntries, long starts, long channelBatches, long channelItems,
      long channelBytes, long channelBacklog, long startFailures, long logEntries, long localWrites,
      long peerQuestions, long peerFallbacks) {}

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
  public record Endpoint(long connections, long heldRequests, long refusedNodeCap, long refusedAddressCap,
      long frameTimeouts, long oversizedFrames, long malformedFrames, long readPauses, long busyReplies,
      long tlsHandshakeTimeouts, long tlsHandshakeFailures, long forbidden) {}

  /**
   * What a node's Raft port refused since the node started (see {@link Node#raftPortStats()}).
   *
   * @param frameRefusals connections closed for a frame that declares more than the Raft port's
   *     limit (the larger of 64 MiB and twice {@link NodeOptions#maxFrameBytes()} plus 32 MiB) or
   *     has a malformed length prefix
   * @param tlsRefusals TLS handshakes refused or timed out on the Raft port: no certificate, one
   *     from another CA or expired, plaintext, or a certificate whose role is not {@code node}
   */
  public record RaftPort(long frameRefusals, long tlsRefusals) {}
}
