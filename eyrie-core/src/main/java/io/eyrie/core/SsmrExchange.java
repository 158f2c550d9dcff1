package io.eyrie.core;

import io.eyrie.core.internal.ObjectEncoding;
import io.eyrie.core.internal.ObjectLocks;
import io.eyrie.core.internal.ObjectStore;
import io.eyrie.core.protocol.CoreReply;
import io.eyrie.core.protocol.SsmrReq;
import io.eyrie.core.protocol.Values;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.GroupId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Owns a partition's part in an S-SMR access (S-SMR's Algorithm 1). When the access starts, a copy
 * of each local declared object goes to every other destination partition, and the access waits,
 * holding its objects, for theirs. Then the command runs on the combined view: local objects,
 * whose writes stick, and the others' copies, whose writes vanish since their owners apply them.
 * Every partition sees the same view, so all compute the same reply.
 */
record SsmrExchange(GroupId self, StateMachine app, ObjectStore store, ObjectLocks locks, CommandRunner runner,
    ObjectEncoding encoding) {
  /**
   * Starts an S-SMR access here: sends the local objects' copies ({@link
   * StateMachine#copyForPartitions}) to the other partitions and waits for theirs, or runs the
   * command at once if it reaches no other partition.
   *
   * @param ctx the access's context
   * @param s the access
   * @param touched its objects
   * @return the execution to answer
   */
  Execution start(ExecutionContext ctx, SsmrReq s, ObjId[] touched) {
    List<GroupId> others = otherPartitions(ctx);
    TreeMap<ObjId, PRObject> mine = new TreeMap<>();
    for (ObjId id : s.cmd().objects()) {
      PRObject o = store.get(id);
      if (o != null) {
        PRObject copy = others.isEmpty() ? o : app.copyForPartitions(o, s.cmd());
        if (copy == null || !id.equals(copy.getId())) {
          return Execution.error("copyForPartitions returned " + (copy == null ? "null" : "object " + copy.getId())
              + " for object " + id);
        }
        mine.put(id, copy);
      }
    }
    String failed = encoding.ship(ctx, others, mine);
    if (failed != null) {
      return Execution.error(failed);
    }
    return others.isEmpty() ? execute(ctx, s.cmd()) : locks.waitHolding(ctx, self, touched, others);
  }

  /**
   * Runs an S-SMR access once every other partition's values are in, on the combined view. A
   * missing object answers NOT_FOUND only if the command reached every partition.
   *
   * @param ctx the access's context
   * @param cmd the access command
   * @return the execution to answer
   */
  Execution execute(ExecutionContext ctx, Command cmd) {
    // The combined view: local objects (writes stick) and copies of the others' (writes vanish).
    TreeMap<ObjId, PRObject> combined = new TreeMap<>();
    for (GroupId g : otherPartitions(ctx)) {
      for (Object item : ctx.received(g)) {
        if (((Values) item).error() != null) {
          return Execution.error(((Values) item).error());
        }
        for (Map.Entry<ObjId, PRObject> e : ((Values) item).objects().entrySet()) {
          combined.put(e.getKey(), e.getValue());
        }
      }
    }
    for (ObjId id : cmd.objects()) {
      PRObject o = store.get(id);
      if (o != null) {
        combined.put(id, o);
      }
    }
    for (ObjId id : cmd.objects()) {
      if (!combined.containsKey(id)) {
        // Only a command that reached every partition knows that the object exists nowhere; one
        // sent to the partitions a (possibly stale) cache named, or by a client that does not
        // know a partition added since, must look again. A partition whose addition has not
        // finished (known, not open) holds nothing and clients cannot name it (review N3).
        if (!ctx.dests().containsAll(ctx.openPartitions())) {
          store.countRetry();
          return Execution.reply(CoreReply.retry(null));
        }
        return Execution.reply(CoreReply.notFound(id));
      }
    }
    store.countMultiPartition();
    return Execution.reply(runner.execute(cmd, combined));
  }

  /** The command's destinations that are partitions, other than this one. */
  private List<GroupId> otherPartitions(ExecutionContext ctx) {
    List<GroupId> out = new ArrayList<>();
    for (GroupId g : ctx.dests()) {
      if (!g.equals(self) && ctx.partitions().contains(g)) {
        out.add(g);
      }
    }
    return out;
  }
}
