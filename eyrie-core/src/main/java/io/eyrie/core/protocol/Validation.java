package io.eyrie.core.protocol;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.multicast.GroupId;
import java.util.Collection;
import java.util.List;
import java.util.TreeSet;

/**
 * Checks a delivered DS-SMR message against its destinations before any group acts on it.
 *
 * <p>The verdict is a function of the message, the oracle's id and the partitions the checking
 * group knows at that point of its log ({@link io.eyrie.multicast.ExecutionContext#partitions()}:
 * a partition added to the running cluster is known to every group before any message names
 * it, and a group's kind never changes), so every destination reaches the same one: either all of them refuse the
 * message with the same error, or none does. That matters because destinations wait for each
 * other's items: a group that acted on a message another group refused would wait for ever
 * (a move whose source is not a destination), and a group that acted alone could lose data (a
 * move from a partition to itself drops the objects and then fails to send them).
 */
public final class Validation {
  private Validation() {}

  /**
   * Returns why a message cannot be executed, or null if it is well formed.
   *
   * @param payload the decoded payload
   * @param dests the message's destinations
   * @param oracle the oracle group
   * @param partitions the partitions the checking group knows
   * @return the error, or null
   */
  public static String check(Object payload, List<GroupId> dests, GroupId oracle, Collection<GroupId> partitions) {
    TreeSet<GroupId> to = new TreeSet<>(dests);
    if (payload instanceof AccessReq a) {
      String bad = command(a.cmd(), Command.Kind.ACCESS);
      if (bad != null) {
        return bad;
      }
      return to.size() == 1 && partitions.contains(to.first()) ? null : "an access goes to exactly one partition";
    }
    if (payload instanceof MoveReq m) {
      if (m.objs() == null || m.objs().length == 0 || m.src() == null || m.dst() == null) {
        return "a move needs objects, a source and a destination";
      }
      for (ObjId id : m.objs()) {
        if (id == null) {
          return "a move names a null object";
        }
      }
      if (m.src().equals(m.dst())) {
        return "a move's source and destination are the same partition " + m.src();
      }
      if (!partitions.contains(m.src()) || !partitions.contains(m.dst())) {
        return "a move's source and destination must be partitions";
      }
      return to.equals(new TreeSet<>(List.of(oracle, m.src(), m.dst()))) ? null
          : "a move goes to the oracle, its source and its destination, not " + to;
    }
    if (payload instanceof CreateReq c) {
      return placed(command(c.cmd(), Command.Kind.CREATE), c.partition(), to, oracle, partitions);
    }
    if (payload instanceof DeleteReq d) {
      return placed(command(d.cmd(), Command.Kind.DELETE), d.partition(), to, oracle, partitions);
    }
    if (payload instanceof SsmrReq s) {
      if (s.cmd() == null || s.cmd().kind() == null) {
        return "an S-SMR command needs a command";
      }
      String bad = command(s.cmd(), s.cmd().kind());
      if (bad != null) {
        return bad;
      }
      int named = 0;
      for (GroupId g : to) {
        if (partitions.contains(g)) {
          named++;
        } else if (!g.equals(oracle)) {
          return "an S-SMR command goes to partitions (and the oracle), not " + g;
        }
      }
      if (named == 0) {
        return "an S-SMR command goes to at least one partition";
      }
      if (s.cmd().kind() != Command.Kind.ACCESS && !to.contains(oracle)) {
        return "an S-SMR create or delete needs the oracle among its destinations";
      }
      return null;
    }
    if (payload instanceof PartitionChange c) {
      if (c.partition() == null || !partitions.contains(c.partition())) {
        return "a partition change names a partition the cluster knows, not " + c.partition()
            + " (add its group first: ClusterAdmin.addGroup)";
      }
      if (!to.contains(oracle) || !to.contains(c.partition())) {
        return "a partition change goes to the oracle and the partitions, its own among them, not " + to;
      }
      for (GroupId g : to) {
        if (!g.equals(oracle) && !partitions.contains(g)) {
          return "a partition change goes to the oracle and partitions only, not " + g;
        }
      }
      return null;
    }
    return null;
  }

  private static String command(Command cmd, Command.Kind kind) {
    if (cmd == null || cmd.kind() != kind) {
      return "expected a " + kind + " command, got " + cmd;
    }
    try {
      if (cmd.objects().isEmpty()) {
        return "a command names at least one object";
      }
    } catch (RuntimeException e) {
      return "a command without objects";
    }
    if (kind != Command.Kind.ACCESS && cmd.objects().size() != 1) {
      return "a " + kind + " names exactly one object";
    }
    return null;
  }

  private static String placed(String bad, GroupId partition, TreeSet<GroupId> to, GroupId oracle,
      Collection<GroupId> partitions) {
    if (bad != null) {
      return bad;
    }
    if (partition == null || !partitions.contains(partition)) {
      return "a create or delete names a partition, not " + partition;
    }
    return to.equals(new TreeSet<>(List.of(oracle, partition))) ? null
        : "a create or delete goes to the oracle and the partition it names (" + partition + "), not " + to;
  }

}
