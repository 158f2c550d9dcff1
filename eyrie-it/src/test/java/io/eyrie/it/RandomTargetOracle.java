package io.eyrie.it;

import io.eyrie.core.ObjId;
import io.eyrie.multicast.GroupId;
import io.eyrie.oracle.OracleStateMachine;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/** The paper's default policy: gather a command's objects in a random partition (many moves). */
final class RandomTargetOracle extends OracleStateMachine {
  @Override
  protected GroupId getTargetPartition(Map<ObjId, GroupId> where) {
    return partitions().get(ThreadLocalRandom.current().nextInt(partitions().size()));
  }
}
