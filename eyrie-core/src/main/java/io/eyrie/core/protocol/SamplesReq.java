package io.eyrie.core.protocol;

/**
 * Query to a partition: the objects of the single-partition commands it sampled since the last
 * such query (its leader's replica answers; not replicated). The rebalancer hands them to the
 * oracle ({@link Observed}), so that the learned placement also sees the accesses that need no
 * consult and keeps objects that are used together where they are.
 */
public record SamplesReq() {}
