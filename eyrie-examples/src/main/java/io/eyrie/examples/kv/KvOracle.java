package io.eyrie.examples.kv;

import io.eyrie.core.Command;
import io.eyrie.multicast.GroupId;
import io.eyrie.oracle.OracleStateMachine;
import java.util.List;

/**
 * The key-value store's placement rule: a new key goes to the partition its number names
 * (key modulo the number of partitions), so that neighbouring keys spread out. The rule runs
 * while the oracle applies its log, so it must be deterministic.
 */
public final class KvOracle extends OracleStateMachine {

  @Override
  protected GroupId getObjectPlacement(Command create) {
    List<GroupId> partitions = partitions();
    return partitions.get((int) Math.floorMod(create.target().value(), (long) partitions.size()));
  }
}
