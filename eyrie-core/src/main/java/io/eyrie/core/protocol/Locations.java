package io.eyrie.core.protocol;

import io.eyrie.core.ObjId;
import io.eyrie.multicast.GroupId;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;

/** Placement helpers shared by the client proxy and the oracle. */
public final class Locations {
  private Locations() {}

  /**
   * Returns the partition holding most of the objects (the fewest moves gather them), ties
   * broken at random. Not for replicated code paths.
   *
   * @param where the partition of each object; not empty
   * @return the partition
   */
  public static GroupId mostCommon(Map<ObjId, GroupId> where) {
    TreeMap<GroupId, Integer> count = new TreeMap<>();
    where.values().forEach(g -> count.merge(g, 1, Integer::sum));
    int best = Collections.max(count.values());
    List<GroupId> top = new ArrayList<>();
    count.forEach((g, c) -> {
      if (c == best) {
        top.add(g);
      }
    });
    return top.get(ThreadLocalRandom.current().nextInt(top.size()));
  }
}
