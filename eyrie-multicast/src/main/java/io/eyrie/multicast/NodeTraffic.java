package io.eyrie.multicast;

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
public record NodeTraffic(long startEntries, long starts, long channelBatches, long channelItems,
    long channelBytes, long channelBacklog, long startFailures, long logEntries, long localWrites,
    long peerQuestions, long peerFallbacks) {}
