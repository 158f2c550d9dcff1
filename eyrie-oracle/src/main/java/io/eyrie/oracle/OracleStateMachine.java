package io.eyrie.oracle;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.core.ClusterAware;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.internal.Locations;
import io.eyrie.core.internal.Msgs;
import io.eyrie.core.internal.Msgs.ConsultReq;
import io.eyrie.core.internal.Msgs.CreateReq;
import io.eyrie.core.internal.Msgs.DeleteReq;
import io.eyrie.core.internal.Msgs.MoveReq;
import io.eyrie.core.internal.Msgs.Prophecy;
import io.eyrie.core.internal.Msgs.SsmrReq;
import io.eyrie.core.internal.Msgs.Verdict;
import io.eyrie.core.internal.Validation;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Deliverer;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.GroupId;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The DS-SMR oracle (the paper's Algorithm 4): knows which partition holds every object,
 * answers consults with prophecies, decides creates and deletes, and follows moves. Usable
 * unchanged; applications override the placement rules.
 *
 * <p>Consults are answered by linearizable read-only queries and are only hints: the partition
 * re-checks locality when the command arrives. Everything else is applied from the log, so
 * {@link #getObjectPlacement} must be deterministic; {@link #getTargetPartition} runs only for
 * consults and may use randomness.
 */
public class OracleStateMachine implements Deliverer, ClusterAware {
  private final TreeMap<ObjId, GroupId> locations = new TreeMap<>();
  private final TreeMap<GroupId, Long> load = new TreeMap<>();
  private GroupId self;
  private ClusterConfig cluster;
  private List<GroupId> partitions = List.of();
  private Codec codec;

  /** Creates an oracle replica with an empty map. */
  public OracleStateMachine() {}

  @Override
  public final void init(GroupId self, ClusterConfig cluster, Codec codec) {
    this.self = self;
    this.cluster = cluster;
    this.partitions = cluster.partitions();
    this.codec = codec;
    for (GroupId p : partitions) {
      load.putIfAbsent(p, 0L);
    }
  }

  /** Returns the partitions, ascending. */
  protected final List<GroupId> partitions() {
    return partitions;
  }

  /** Returns the number of objects the oracle places in each partition. */
  protected final SortedMap<GroupId, Long> load() {
    return Collections.unmodifiableSortedMap(load);
  }

  /** Returns where an object is, or null if it does not exist. */
  protected final GroupId locationOf(ObjId id) {
    return locations.get(id);
  }

  /**
   * Returns the objects a command touches (the paper's {@code extractObject}). The default is
   * the command's declared set.
   *
   * @param command the command
   * @return its objects
   */
  protected Set<ObjId> extractObjects(Command command) {
    return command.objects();
  }

  /**
   * Returns the partition where the objects of a multi-partition command should be gathered.
   * Called for consults only (not replicated), so it may be random. The default picks the
   * partition already holding most of them (fewest moves), ties broken at random.
   *
   * @param where the current partition of each object
   * @return the target partition
   */
  protected GroupId getTargetPartition(Map<ObjId, GroupId> where) {
    return Locations.mostCommon(where);
  }

  /**
   * Called while applying the log when a create succeeds, after the object was placed: a
   * subclass may remember attributes of the new object (for {@link #getTargetPartition}). Must
   * be deterministic, and what it keeps must be in {@link #snapshotExtra}.
   *
   * @param create the create command
   * @param at the partition the object was placed in
   */
  protected void created(Command create, GroupId at) {}

  /**
   * Called while applying the log when an object is deleted; the counterpart of
   * {@link #created}.
   *
   * @param id the deleted object
   */
  protected void deleted(ObjId id) {}

  /**
   * Returns the partition where a new object is created. Must be deterministic (it is also
   * evaluated while applying the log). The default is the partition with the fewest objects.
   *
   * @param create the create command
   * @return a partition
   */
  protected GroupId getObjectPlacement(Command create) {
    GroupId best = partitions.get(0);
    for (GroupId p : partitions) {
      if (load.getOrDefault(p, 0L) < load.getOrDefault(best, 0L)) {
        best = p;
      }
    }
    return best;
  }

  @Override
  public Object query(Object query) {
    if (query instanceof ConsultReq c) {
      return consult(c.cmd());
    }
    if (query instanceof Msgs.StatsReq) {
      return new Msgs.OracleMapReply(new TreeMap<>(locations));
    }
    throw new IllegalArgumentException("the oracle answers no " + (query == null ? null : query.getClass().getSimpleName()));
  }

  private Prophecy consult(Command cmd) {
    switch (cmd.kind()) {
      case ACCESS -> {
        TreeMap<ObjId, GroupId> where = new TreeMap<>();
        for (ObjId id : extractObjects(cmd)) {
          GroupId g = locations.get(id);
          if (g == null) {
            return new Prophecy(Msgs.NOK, null, null);
          }
          where.put(id, g);
        }
        return new Prophecy(Msgs.RETRY, where, getTargetPartition(where));
      }
      case CREATE -> {
        if (locations.containsKey(cmd.target())) {
          return new Prophecy(Msgs.NOK, null, null);
        }
        return new Prophecy(Msgs.RETRY, new TreeMap<>(), getObjectPlacement(cmd));
      }
      case DELETE -> {
        GroupId g = locations.get(cmd.target());
        if (g == null) {
          return new Prophecy(Msgs.NOK, null, null);
        }
        TreeMap<ObjId, GroupId> where = new TreeMap<>();
        where.put(cmd.target(), g);
        return new Prophecy(Msgs.RETRY, where, g);
      }
      default -> throw new IllegalArgumentException("unknown command kind " + cmd.kind());
    }
  }

  @Override
  public Execution deliver(ExecutionContext ctx) {
    Object p = ctx.payload();
    String invalid = Validation.check(p, ctx.dests(), cluster);
    if (invalid != null) {
      return Execution.error(invalid);
    }
    if (p instanceof MoveReq m) {
      // A location is only a hint (a stale one costs a retry), so a move needs no wait here.
      for (ObjId id : m.objs()) {
        if (m.src().equals(locations.get(id))) {
          place(id, m.dst());
        }
      }
      return Execution.done();
    } else if (p instanceof CreateReq c) {
      return Execution.awaitFrom(List.of(c.partition()));
    } else if (p instanceof DeleteReq d) {
      return Execution.awaitFrom(List.of(d.partition()));
    } else if (p instanceof SsmrReq s) {
      if (s.cmd().kind() == Command.Kind.ACCESS) {
        return Execution.done();
      }
      return Execution.awaitFrom(partitionsOf(ctx));
    }
    return Execution.error("the oracle cannot execute " + (p == null ? null : p.getClass().getSimpleName()));
  }

  /*
   * Execution atomicity (docs/design.md): a create or delete changes the map that consults read,
   * and its verdict lets the partitions finish it, so both happen only here, once every partition
   * destination has reached the command at the head of its queue (its Begun item). Deciding at
   * delivery instead let a consult see a delete that a partition would still order after a later
   * read of the old value.
   */
  @Override
  public Execution resume(ExecutionContext ctx) {
    Object p = ctx.payload();
    if (p instanceof CreateReq c) {
      ObjId id = c.cmd().target();
      int status = locations.containsKey(id) ? Msgs.NOK : Msgs.OK;
      if (status == Msgs.OK) {
        place(id, c.partition());
        created(c.cmd(), c.partition());
      }
      ctx.send(c.partition(), new Verdict(status, c.partition()));
      return Execution.done();
    } else if (p instanceof DeleteReq d) {
      ObjId id = d.cmd().target();
      GroupId at = locations.get(id);
      int status;
      if (at == null) {
        status = Msgs.NOK;
      } else if (at.equals(d.partition())) {
        place(id, null);
        deleted(id);
        status = Msgs.OK;
      } else {
        status = Msgs.RETRY;
      }
      ctx.send(d.partition(), new Verdict(status, at));
      return Execution.done();
    } else if (p instanceof SsmrReq s) {
      Command cmd = s.cmd();
      Verdict v;
      GroupId at = locations.get(cmd.target());
      if (cmd.kind() == Command.Kind.CREATE) {
        if (at != null) {
          v = new Verdict(Msgs.NOK, at);
        } else {
          at = getObjectPlacement(cmd);
          place(cmd.target(), at);
          created(cmd, at);
          v = new Verdict(Msgs.OK, at);
        }
      } else {
        if (at != null) {
          place(cmd.target(), null);
          deleted(cmd.target());
        }
        v = new Verdict(at != null ? Msgs.OK : Msgs.NOK, at);
      }
      for (GroupId g : partitionsOf(ctx)) {
        ctx.send(g, v);
      }
      return Execution.done();
    }
    return Execution.error("nothing to resume for " + (p == null ? null : p.getClass().getSimpleName()));
  }

  private List<GroupId> partitionsOf(ExecutionContext ctx) {
    List<GroupId> out = new ArrayList<>();
    for (GroupId g : ctx.dests()) {
      if (!g.equals(self)) {
        out.add(g);
      }
    }
    return out;
  }

  private void place(ObjId id, GroupId at) {
    GroupId old = at == null ? locations.remove(id) : locations.put(id, at);
    if (old != null) {
      load.merge(old, -1L, Long::sum);
    }
    if (at != null) {
      load.merge(at, 1L, Long::sum);
    }
  }

  /**
   * Returns the oracle's application state beyond the location map (none by default); override
   * with {@link #restoreExtra} if a subclass keeps replicated state of its own.
   */
  protected byte[] snapshotExtra() {
    return new byte[0];
  }

  /** Restores what {@link #snapshotExtra} returned. */
  protected void restoreExtra(byte[] extra) {}

  @Override
  public final byte[] snapshot() {
    Output out = new Output(4096, -1);
    out.writeVarInt(locations.size(), true);
    for (Map.Entry<ObjId, GroupId> e : locations.entrySet()) {
      out.writeLong(e.getKey().value());
      out.writeString(e.getValue().name());
    }
    byte[] extra = snapshotExtra();
    out.writeVarInt(extra.length, true);
    out.writeBytes(extra);
    return out.toBytes();
  }

  @Override
  public final void restore(byte[] state) {
    locations.clear();
    load.replaceAll((g, n) -> 0L);
    if (state.length == 0) {
      restoreExtra(new byte[0]);
      return;
    }
    Input in = new Input(state);
    int n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      place(ObjId.valueOf(in.readLong()), GroupId.valueOf(in.readString()));
    }
    restoreExtra(in.readBytes(in.readVarInt(true)));
  }

  /** Returns the codec (for subclasses that snapshot extra state). */
  protected final Codec codec() {
    return codec;
  }
}
