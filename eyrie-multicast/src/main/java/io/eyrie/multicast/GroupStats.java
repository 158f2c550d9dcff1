package io.eyrie.multicast;

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
public record GroupStats(long entries, long delivered, long deliveredMulti, long executed, long parks,
    long duplicates, long itemsSent, long itemsReceived, int pending, int queued, long snapshotsTaken,
    long snapshotsLoaded, long snapshotsInstalled) {}
