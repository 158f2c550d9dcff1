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
 * the log and kept in the snapshot). A community's home is a fixed partition. When a command
 * needs users from several partitions (the paper's {@code getTargetPartition}, "based on an
 * attribute of the objects"):
 * <ul>
 *   <li>if all its users belong to communities with the same home, they are gathered there: a
 *       user away from home goes back, and a community's commands end up in one partition;</li>
 *   <li>if they belong to communities with different homes (a follow or a post across
 *       communities), nobody moves: the oracle answers no target, and the client runs the
 *       command with S-SMR on the partitions that hold its users. Gathering it somewhere would
 *       take a user away from its community, whose next command would move it back: with 10%
 *       of follows across communities, majority-gathering kept making about 45 moves a second
 *       in {@code chirper demo} and never settled;</li>
 *   <li>users without a known community follow the others' home; if none has one, the default
 *       rule applies.</li>
 * </ul>
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
    GroupId home = null;
    for (ObjId id : where.keySet()) {
      Integer c = communities.get(id.value());
      if (c == null) {
        continue;
      }
      GroupId h = home(c);
      if (home == null) {
        home = h;
      } else if (!home.equals(h)) {
        return null; // across communities' homes: run it where the users are (S-SMR)
      }
    }
    return home != null ? home : super.getTargetPartition(where);
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
