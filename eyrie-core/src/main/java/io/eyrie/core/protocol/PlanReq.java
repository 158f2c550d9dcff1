package io.eyrie.core.protocol;

/**
 * Query to the oracle: up to {@code max} objects whose partition differs from its learned
 * plan (GRAPH placement; none otherwise), for a rebalancer to move.
 */
public record PlanReq(int max) {}
