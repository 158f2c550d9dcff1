package io.eyrie.core;

/**
 * Counters of one partition (from a linearizable read of its replicated state).
 *
 * @param objects objects held
 * @param executed commands executed (creates included)
 * @param multiPartition commands executed with S-SMR together with other partitions
 * @param retries retry answers given
 */
public record PartitionStats(long objects, long executed, long multiPartition, long retries) {}
