package io.eyrie.core;

/**
 * Counters of a client proxy.
 *
 * @param commands commands issued
 * @param cacheHits commands whose first attempt needed no consult
 * @param consults consults of the oracle
 * @param moves move commands sent
 * @param movedObjects objects asked to move
 * @param retries retry answers received
 * @param fallbacks commands executed with the S-SMR fallback
 * @param multiPartition commands sent to several partitions at once (S-SMR executions)
 * @param direct commands that succeeded in a single partition at the first attempt, without a move
 * @param reads reads ({@link Client#sendRead}) a partition served off the log
 */
public record ClientStats(long commands, long cacheHits, long consults, long moves, long movedObjects,
    long retries, long fallbacks, long multiPartition, long direct, long reads) {

  /** Returns the share of commands that executed in one partition at once, without retry or move. */
  public double directShare() {
    return commands == 0 ? 0 : (double) direct / commands;
  }
}
