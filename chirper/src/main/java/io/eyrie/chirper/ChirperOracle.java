package io.eyrie.chirper;

import io.eyrie.core.Command;
import io.eyrie.multicast.GroupId;
import io.eyrie.oracle.OracleStateMachine;

/**
 * Chirper's oracle: a new user goes to the partition of its community (interest), so that
 * users who follow each other start together; a bulk-loaded user ({@link Ops.SeedUser}) goes to
 * the partition its loader chose; moves keep the default balancing.
 */
public final class ChirperOracle extends OracleStateMachine {
  @Override
  protected GroupId getObjectPlacement(Command create) {
    if (create.op() instanceof Ops.NewUser n) {
      return partitions().get(Math.floorMod(n.community(), partitions().size()));
    }
    if (create.op() instanceof Ops.SeedUser s) {
      return partitions().get(Math.floorMod(s.slot(), partitions().size()));
    }
    return super.getObjectPlacement(create);
  }
}
