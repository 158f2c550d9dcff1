package io.eyrie.core.internal;

import io.eyrie.core.ObjId;
import io.eyrie.core.PRObject;
import io.eyrie.core.protocol.Begun;
import io.eyrie.core.protocol.CoreReply;
import io.eyrie.core.protocol.MoveReq;
import io.eyrie.core.protocol.Values;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.GroupId;
import java.util.List;
import java.util.TreeMap;

/**
 * Owns a partition's side of moves (docs/design.md 5.3, 5.4). The source removes the objects it
 * holds and ships their values, possibly none, but never into a retired partition. The
 * destination waits, holding the objects, until the values arrive, then adopts them. The
 * destination tells the oracle how the move ended, so that the oracle's map follows only a move
 * whose values arrived.
 */
public final class Moves {
  private final GroupId self;
  private final GroupId oracle;
  private final ObjectStore store;
  private final TableChanges tables;
  private final ObjectLocks locks;
  private final ObjectEncoding encoding;

  public Moves(GroupId self, GroupId oracle, ObjectStore store, TableChanges tables, ObjectLocks locks,
      ObjectEncoding encoding) {
    this.self = self;
    this.oracle = oracle;
    this.store = store;
    this.tables = tables;
    this.locks = locks;
    this.encoding = encoding;
  }

  /**
   * Starts a move here: the source ships its objects and answers; the destination waits for them.
   *
   * @param ctx the move's context
   * @param m the move
   * @param touched its objects
   * @return the execution to answer
   */
  public Execution start(ExecutionContext ctx, MoveReq m, ObjId[] touched) {
    if (!self.equals(m.src())) {
      return locks.waitHolding(ctx, self, touched, List.of(m.src()));
    }
    TreeMap<ObjId, PRObject> out = new TreeMap<>();
    for (ObjId id : m.objs()) {
      PRObject o = store.get(id);
      if (o != null) {
        out.put(id, o);
      }
    }
    // The channel encodes the values now; only once they are encoded do they leave. The
    // oracle moves its map when the destination has them (or leaves it, if they did not leave).
    String failed;
    if (tables.isRetired(m.dst())) {
      failed = "partition " + m.dst() + " is retired: no move brings objects into it";
      ctx.send(m.dst(), Values.stale(failed));
    } else {
      failed = encoding.ship(ctx, List.of(m.dst()), out);
    }
    if (failed != null) {
      return Execution.error(failed);
    }
    out.keySet().forEach(store::remove);
    return Execution.reply(CoreReply.ok(null));
  }

  /**
   * Ends a move at its destination, once the source's values are in: adopts them, or answers the
   * source's error.
   *
   * @param ctx the move's context
   * @param m the move
   * @return the execution to answer
   */
  public Execution arrived(ExecutionContext ctx, MoveReq m) {
    // The oracle's map follows the move once the objects are here: nothing is in transit when
    // the map says a partition is empty. Every way out tells the oracle, which waits for it.
    Values v;
    try {
      v = (Values) ctx.received(m.src()).get(0);
    } catch (RuntimeException e) {
      v = Values.failed("the moved values could not be read: " + e.getMessage());
    }
    if (v.error() != null) {
      ctx.send(oracle, Begun.refused(self, v.error()));
      if (v.stale()) {
        // The client's consult named this partition before it was retired (the retirement is
        // ordered between the consult and the move): its location was stale, so it asks the
        // oracle again, as for any other stale location; nothing moved.
        return Execution.reply(CoreReply.retry(null));
      }
      return Execution.error(v.error());
    }
    store.putAll(v.objects());
    ctx.send(oracle, new Begun(self));
    return Execution.reply(CoreReply.ok(v.objects().size()));
  }
}
