package io.eyrie.core.protocol;

/** Query to a partition: its counters. Query to the oracle: its map (for audits). */
public record StatsReq(boolean withObjects) {}
