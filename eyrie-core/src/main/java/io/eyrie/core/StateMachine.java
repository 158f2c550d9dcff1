package io.eyrie.core;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.core.internal.Msgs;
import io.eyrie.core.internal.Msgs.AccessReq;
import io.eyrie.core.internal.Msgs.Begun;
import io.eyrie.core.internal.Msgs.CoreReply;
import io.eyrie.core.internal.Msgs.CreateReq;
import io.eyrie.core.internal.Msgs.DeleteReq;
import io.eyrie.core.internal.Msgs.MoveReq;
import io.eyrie.core.internal.Msgs.SsmrReq;
import io.eyrie.core.internal.Msgs.Values;
import io.eyrie.core.internal.Msgs.Verdict;
import io.eyrie.core.internal.Validation;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Deliverer;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.GroupId;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The server side of a partition: the DS-SMR server proxy (the paper's Algorithm 3 and S-SMR's
 * Algorithm 1) around the application's code. A service extends this class and implements
 * {@link #executeCommand} and {@link #createObject} as if every object were local: the proxy
 * checks locality, moves objects in and out, and, for commands executed with S-SMR, gathers
 * copies of remote objects so that the code sees them too.
 *
 * <p>Like every replicated state machine, the code must be deterministic: no clock, no
 * randomness, no iteration over hash-ordered collections that could differ between replicas.
 *
 * <pre>{@code
 * public final class BankServer extends StateMachine {
 *   protected Object executeCommand(Command c) {
 *     Transfer t = (Transfer) c.op();
 *     Account from = (Account) getObject(ObjId.valueOf(t.from()));
 *     Account to = (Account) getObject(ObjId.valueOf(t.to()));
 *     if (from.balance < t.amount()) return "insufficient funds";
 *     from.balance -= t.amount();
 *     to.balance += t.amount();
 *     return "ok";
 *   }
 *   protected PRObject createObject(Command c) {
 *     return new Account(c.target(), (Long) c.op());
 *   }
 * }
 * }</pre>
 */
public abstract class StateMachine implements Deliverer, ClusterAware {
  private final TreeMap<ObjId, PRObject> objects = new TreeMap<>();
  private GroupId self;
  private ClusterConfig cluster;
  private Codec codec;
  private Map<ObjId, PRObject> view;
  private long executed;
  private long multiPartition;
  private long retries;

  /** Creates the state machine of one partition replica, with no objects. */
  protected StateMachine() {}

  /**
   * Executes an access command. Every object of {@link Command#objects()} is available through
   * {@link #getObject}; changes made to them are the command's writes.
   *
   * @param command the command
   * @return the reply for the client (a registered object or null), or {@link #retry(Collection)}
   */
  protected abstract Object executeCommand(Command command);

  /**
   * Creates the object of a create command (the oracle has checked that it exists nowhere).
   *
   * @param command the create command; {@link Command#target()} is the new object's id
   * @return the new object, with that id
   */
  protected abstract PRObject createObject(Command command);

  /**
   * Returns an object of the command being executed, or null if it does not exist.
   *
   * @param id the object's id
   * @return the object
   */
  protected final PRObject getObject(ObjId id) {
    return view != null ? view.get(id) : objects.get(id);
  }

  /**
   * Asks the client proxy to co-locate more objects and try again: the answer to return from
   * {@link #executeCommand} when the command needs objects outside its declared set (for
   * example, the followers of a post's author).
   *
   * @param extra the objects to add to the command
   * @return the marker to return
   */
  protected final Object retry(Collection<ObjId> extra) {
    return new RetryMarker(extra.toArray(new ObjId[0]));
  }

  private record RetryMarker(ObjId[] extra) {}

  /** Returns this replica's partition. */
  protected final GroupId partition() {
    return self;
  }

  /** Returns the ids of the objects this partition holds, ascending. */
  protected final Collection<ObjId> localObjects() {
    return Collections.unmodifiableSet(objects.keySet());
  }

  @Override
  public final void init(GroupId self, ClusterConfig cluster, Codec codec) {
    this.self = self;
    this.cluster = cluster;
    this.codec = codec;
  }

  @Override
  public final Execution deliver(ExecutionContext ctx) {
    Object p = ctx.payload();
    String invalid = Validation.check(p, ctx.dests(), cluster);
    if (invalid != null) {
      return Execution.error(invalid);
    }
    if (p instanceof AccessReq a) {
      for (ObjId id : a.cmd().objects()) {
        if (!objects.containsKey(id)) {
          retries++;
          return Execution.reply(CoreReply.retry(null));
        }
      }
      return Execution.reply(execute(a.cmd(), null));
    } else if (p instanceof MoveReq m) {
      if (self.equals(m.src())) {
        TreeMap<ObjId, PRObject> out = new TreeMap<>();
        for (ObjId id : m.objs()) {
          PRObject o = objects.get(id);
          if (o != null) {
            out.put(id, o);
          }
        }
        // The channel encodes the values now; only once they are encoded do they leave.
        String failed = ship(ctx, List.of(m.dst()), out);
        if (failed != null) {
          return Execution.error(failed);
        }
        out.keySet().forEach(objects::remove);
        return Execution.reply(CoreReply.ok(null));
      }
      return Execution.awaitFrom(List.of(m.src()));
    } else if (p instanceof CreateReq || p instanceof DeleteReq) {
      // Execution atomicity: the oracle changes its map (which consults read) and sends its
      // verdict only after this partition has reached the command here, so nothing ordered
      // before it here can observe the change, and nothing after it can miss it.
      ctx.send(cluster.oracle(), new Begun(self));
      return Execution.awaitFrom(List.of(cluster.oracle()));
    } else if (p instanceof SsmrReq s) {
      if (s.cmd().kind() != Command.Kind.ACCESS) {
        ctx.send(cluster.oracle(), new Begun(self));
        return Execution.awaitFrom(List.of(cluster.oracle()));
      }
      List<GroupId> others = otherPartitions(ctx);
      TreeMap<ObjId, PRObject> mine = new TreeMap<>();
      for (ObjId id : s.cmd().objects()) {
        PRObject o = objects.get(id);
        if (o != null) {
          mine.put(id, o);
        }
      }
      String failed = ship(ctx, others, mine);
      if (failed != null) {
        return Execution.error(failed);
      }
      return others.isEmpty() ? ssmrExecute(ctx, s) : Execution.awaitFrom(others);
    }
    return Execution.error("a partition cannot execute " + (p == null ? null : p.getClass().getSimpleName()));
  }

  @Override
  public final Execution resume(ExecutionContext ctx) {
    Object p = ctx.payload();
    if (p instanceof MoveReq m) {
      Values v = (Values) ctx.received(m.src()).get(0);
      if (v.error() != null) {
        return Execution.error(v.error());
      }
      objects.putAll(v.objects());
      return Execution.reply(CoreReply.ok(v.objects().size()));
    } else if (p instanceof CreateReq c) {
      Verdict v = (Verdict) ctx.received(cluster.oracle()).get(0);
      return Execution.reply(create(c.cmd(), v));
    } else if (p instanceof DeleteReq d) {
      Verdict v = (Verdict) ctx.received(cluster.oracle()).get(0);
      return Execution.reply(delete(d.cmd(), v));
    } else if (p instanceof SsmrReq s) {
      return ssmrExecute(ctx, s);
    }
    return Execution.error("nothing to resume for " + (p == null ? null : p.getClass().getSimpleName()));
  }

  private CoreReply create(Command cmd, Verdict v) {
    if (v.status() == Msgs.RETRY) {
      return CoreReply.retry(null);
    }
    if (v.status() != Msgs.OK) {
      return CoreReply.nok("object " + cmd.target() + " already exists");
    }
    if (!self.equals(v.location())) {
      return CoreReply.ok(null);
    }
    PRObject o = createObject(cmd);
    if (o == null || !cmd.target().equals(o.getId())) {
      return CoreReply.nok("createObject returned an object without id " + cmd.target());
    }
    try {
      // An object that cannot be encoded could never be moved, copied or snapshotted.
      codec.encode(o);
    } catch (IllegalArgumentException e) {
      return CoreReply.nok("object " + cmd.target() + " cannot be encoded: " + e.getMessage());
    }
    objects.put(o.getId(), o);
    executed++;
    return CoreReply.ok(null);
  }

  /** Applies the oracle's verdict on a delete: OK removes the object wherever it is here. */
  private CoreReply delete(Command cmd, Verdict v) {
    if (v.status() == Msgs.OK) {
      objects.remove(cmd.target());
      return CoreReply.ok(null);
    }
    return v.status() == Msgs.RETRY ? CoreReply.retry(null) : CoreReply.nok("object " + cmd.target() + " does not exist");
  }

  private Execution ssmrExecute(ExecutionContext ctx, SsmrReq s) {
    Command cmd = s.cmd();
    if (cmd.kind() == Command.Kind.CREATE) {
      return Execution.reply(create(cmd, (Verdict) ctx.received(cluster.oracle()).get(0)));
    }
    if (cmd.kind() == Command.Kind.DELETE) {
      return Execution.reply(delete(cmd, (Verdict) ctx.received(cluster.oracle()).get(0)));
    }
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
      PRObject o = objects.get(id);
      if (o != null) {
        combined.put(id, o);
      }
    }
    for (ObjId id : cmd.objects()) {
      if (!combined.containsKey(id)) {
        // Only a command that reached every partition knows that the object exists nowhere; one
        // sent to the partitions a (possibly stale) cache named must look again.
        if (!ctx.dests().containsAll(cluster.partitions())) {
          retries++;
          return Execution.reply(CoreReply.retry(null));
        }
        return Execution.reply(CoreReply.nok("object " + id + " does not exist"));
      }
    }
    multiPartition++;
    return Execution.reply(execute(cmd, combined));
  }

  /**
   * Sends the values of objects to other partitions. The channel encodes them at once (the
   * receivers get copies, whatever this partition does to its objects later); if they cannot be
   * encoded, the receivers are told so, so that they answer an error instead of waiting.
   *
   * @return null, or why the values could not be sent
   */
  private static String ship(ExecutionContext ctx, List<GroupId> to, TreeMap<ObjId, PRObject> values) {
    try {
      for (GroupId g : to) {
        ctx.send(g, Values.of(values));
      }
      return null;
    } catch (IllegalArgumentException e) {
      String why = "the objects " + values.keySet() + " cannot be encoded: " + e.getMessage();
      for (GroupId g : to) {
        ctx.send(g, Values.failed(why));
      }
      return why;
    }
  }

  private CoreReply execute(Command cmd, Map<ObjId, PRObject> combined) {
    view = combined;
    try {
      Object r = executeCommand(cmd);
      executed++;
      if (r instanceof RetryMarker m) {
        retries++;
        return CoreReply.retry(m.extra());
      }
      return CoreReply.ok(r);
    } finally {
      view = null;
    }
  }

  private List<GroupId> otherPartitions(ExecutionContext ctx) {
    List<GroupId> out = new ArrayList<>();
    for (GroupId g : ctx.dests()) {
      if (!g.equals(self) && cluster.group(g).kind() == ClusterConfig.Kind.PARTITION) {
        out.add(g);
      }
    }
    return out;
  }

  @Override
  public Object query(Object query) {
    if (query instanceof Msgs.StatsReq r) {
      long[] ids = null;
      if (r.withObjects()) {
        ids = objects.keySet().stream().mapToLong(ObjId::value).toArray();
      }
      return new Msgs.PartitionStatsReply(objects.size(), executed, multiPartition, retries, ids);
    }
    throw new IllegalArgumentException("a partition answers no " + (query == null ? null : query.getClass().getSimpleName()));
  }

  @Override
  public byte[] snapshot() {
    Output out = new Output(4096, -1);
    out.writeVarLong(executed, true);
    out.writeVarLong(multiPartition, true);
    out.writeVarLong(retries, true);
    out.writeVarInt(objects.size(), true);
    for (PRObject o : objects.values()) {
      codec.write(out, o);
    }
    return out.toBytes();
  }

  @Override
  public void restore(byte[] state) {
    objects.clear();
    executed = 0;
    multiPartition = 0;
    retries = 0;
    if (state.length == 0) {
      return;
    }
    Input in = new Input(state);
    executed = in.readVarLong(true);
    multiPartition = in.readVarLong(true);
    retries = in.readVarLong(true);
    int n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      PRObject o = (PRObject) codec.read(in);
      objects.put(o.getId(), o);
    }
  }
}
