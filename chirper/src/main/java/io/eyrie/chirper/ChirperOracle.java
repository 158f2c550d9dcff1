package io.eyrie.chirper;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.multicast.GroupId;
import io.eyrie.oracle.OracleStateMachine;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Chirper's oracle. A new user goes to the partition of its community (interest), so that users
 * who follow each other start together; a bulk-loaded user ({@link Ops.SeedUser}) goes to the
 * partition its loader chose.
 *
 * <p>The oracle remembers each user's community (replicated: it is learned from the creates in
 * the log and kept in the snapshot). When a command needs users from several partitions, they
 * are gathered in the home partition of the community most of them belong to: the paper's
 * {@code getTargetPartition} "based on an attribute of the objects". Gathering by community
 * moves each user at most once on the way to a partitioning by community, where a random or
 * majority choice among the partitions involved keeps reshuffling two-user commands (a
 * follow's pair has no majority) for a long time. Without a community majority (users created
 * without one, or a tie between communities) the default rule applies.
 */
public final class ChirperOracle extends OracleStateMachine {
  private final HashMap<Long, Integer> communities = new HashMap<>();

  @Override
  protected GroupId getObjectPlacement(Command create) {
    if (create.op() instanceof Ops.NewUser n) {
      return home(n.community());
    }
    if (create.op() instanceof Ops.SeedUser s) {
      return partitions().get(Math.floorMod(s.slot(), partitions().size()));
    }
    return super.getObjectPlacement(create);
  }

  private GroupId home(int community) {
    return partitions().get(Math.floorMod(community, partitions().size()));
  }

  @Override
  protected void created(Command create, GroupId at) {
    if (create.op() instanceof Ops.NewUser n) {
      communities.put(create.target().value(), n.community());
    } else if (create.op() instanceof Ops.SeedUser s) {
      communities.put(create.target().value(), s.community());
    }
  }

  @Override
  protected void deleted(ObjId id) {
    communities.remove(id.value());
  }

  /** Returns the community the oracle knows for a user, or null. */
  Integer communityOf(long user) {
    return communities.get(user);
  }

  @Override
  protected GroupId getTargetPartition(Map<ObjId, GroupId> where) {
    TreeMap<Integer, Integer> count = new TreeMap<>();
    for (ObjId id : where.keySet()) {
      Integer c = communities.get(id.value());
      if (c != null) {
        count.merge(c, 1, Integer::sum);
      }
    }
    Integer best = null;
    boolean tie = false;
    for (Map.Entry<Integer, Integer> e : count.entrySet()) {
      if (best == null || e.getValue() > count.get(best)) {
        best = e.getKey();
        tie = false;
      } else if (e.getValue().equals(count.get(best))) {
        tie = true;
      }
    }
    if (best == null || tie) {
      return super.getTargetPartition(where);
    }
    return home(best);
  }

  @Override
  protected Object extraState() {
    // Sorted, so that replicas with the same state snapshot the same bytes.
    return new TreeMap<>(communities);
  }

  @Override
  @SuppressWarnings("unchecked")
  protected void restoreExtraState(Object state) {
    communities.clear();
    if (state != null) {
      communities.putAll((Map<Long, Integer>) state);
    }
  }
}
