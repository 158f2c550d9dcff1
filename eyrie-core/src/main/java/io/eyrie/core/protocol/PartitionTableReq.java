package io.eyrie.core.protocol;

/** Query to the oracle: its {@link io.eyrie.core.PartitionTable}. */
public record PartitionTableReq() {}
