package io.eyrie.core;

import java.util.List;
import java.util.Map;

/**
 * The result of a placement audit: the oracle's map against the partitions' contents. Run it
 * when no command is in flight: {@link Client#audit()} reports only what lasts over a second of
 * looks, so a move or create that is finishing is not reported, but one that runs all along is.
 *
 * @param objects objects in the oracle's map
 * @param missing objects the oracle places in a partition that does not hold them
 * @param duplicated objects held by more than one partition
 * @param misplaced objects held by one partition while the oracle says another
 * @param unknown objects held by a partition that the oracle does not know
 * @param perPartition objects held by each partition
 */
public record AuditReport(int objects, List<ObjId> missing, List<ObjId> duplicated, List<ObjId> misplaced,
    List<ObjId> unknown, Map<String, Integer> perPartition) {

  /** Returns true if the map and the partitions agree exactly. */
  public boolean clean() {
    return missing.isEmpty() && duplicated.isEmpty() && misplaced.isEmpty() && unknown.isEmpty();
  }
}
