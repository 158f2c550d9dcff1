package io.eyrie.core.protocol;

/** A partition's answer to {@link StatsReq}. */
public record PartitionStatsReply(long objects, long executed, long multiPartition, long retries,
    long[] objectIds) {}
