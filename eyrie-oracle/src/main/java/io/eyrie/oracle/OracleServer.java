package io.eyrie.oracle;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.protocol.ConsultReq;
import io.eyrie.core.protocol.CreateReq;
import io.eyrie.core.protocol.DeleteReq;
import io.eyrie.core.protocol.Locations;
import io.eyrie.core.protocol.MoveReq;
import io.eyrie.core.protocol.Observed;
import io.eyrie.core.protocol.OracleMapReply;
import io.eyrie.core.protocol.PartitionChange;
import io.eyrie.core.protocol.PartitionTableReq;
import io.eyrie.core.protocol.PlanReq;
import io.eyrie.core.protocol.SsmrReq;
import io.eyrie.core.protocol.StatsReq;
import io.eyrie.core.protocol.Validation;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Deliverer;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.GroupId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The oracle's protocol (the paper's Algorithm 4) around an application's
 * {@link OracleStateMachine}: it receives the oracle's commands and queries and hands them to
 * the parts that own the state, the {@link LocationMap}, the {@link PartitionTableState}, the
 * {@link VerdictChains}, the {@link Consults}, the {@link Verdicts}, the {@link MovePlans} and
 * the {@link OracleSnapshot}. The application's class only supplies the placement hooks, so it
 * cannot change the protocol.
 *
 * <p>Execution atomicity (docs/design.md): a create or delete changes the map that consults
 * read, and its verdict lets the partitions finish it, so both happen only once every partition
 * destination has reached the command at the head of its queue (its Begun item). The command
 * waits for that with {@link Execution#resumeLater}, so the oracle goes on with other commands
 * meanwhile; what keeps the map right is that the changes to one object are applied in the
 * oracle's delivery order: a create, delete or move of an object that has an earlier one still
 * waiting is queued behind it ({@link VerdictChains}) and applied when its turn comes. A move
 * waits for its destination's Begun, which says whether the objects arrived: the map follows
 * only a move that took place. A create waits for a Begun that may refuse it (the partition's
 * application could not make the object): then the verdict is REFUSED and the map never names
 * the object.
 */
final class OracleServer implements Deliverer {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(OracleServer.class);
  private final GroupId self;
  private final ClusterConfig cluster;
  /** The learned placement (GRAPH mode), or null (the paper's rule). Not replicated. */
  private final GraphPlacement graph;
  private final LocationMap map;
  private final PartitionTableState table;
  private final VerdictChains chains = new VerdictChains();
  private final Consults consults;
  private final Verdicts verdicts;
  private final MovePlans plans;
  private final OracleSnapshot snapshots;

  OracleServer(OracleStateMachine app, GroupId self, ClusterConfig cluster, Codec codec) {
    this.self = self;
    this.cluster = cluster;
    this.graph = app.placement() == OracleStateMachine.Placement.GRAPH ? new GraphPlacement() : null;
    this.map = new LocationMap(this::entered);
    this.table = new PartitionTableState(cluster, map);
    this.consults = new Consults(app, map, table, graph);
    this.verdicts = new Verdicts(app, map, table);
    this.plans = new MovePlans(map, table, chains, graph);
    this.snapshots = new OracleSnapshot(app, codec, map, chains, table);
  }

  /** An object entered the map: the create a consult prophesied there (if any) is now in the map itself. */
  private void entered(GroupId at) {
    consults.entered(at);
  }

  /** The active partitions, ascending: where new objects and gathered ones go. */
  List<GroupId> partitions() {
    return table.active();
  }

  /** The objects per partition, as {@link Consults#load} counts them. */
  TreeMap<GroupId, Long> load() {
    return consults.load();
  }

  /** The default target of a multi-partition command: see {@link OracleStateMachine#getTargetPartition}. */
  GroupId defaultTarget(Map<ObjId, GroupId> where) {
    return graph != null ? graph.target(where) : Locations.mostCommon(where);
  }

  /** The learned placement, or null outside GRAPH mode (for tests). */
  GraphPlacement graphPlacement() {
    return graph;
  }

  GroupId locationOf(ObjId id) {
    return map.get(id);
  }

  @Override
  public Object query(Object query) {
    if (query instanceof ConsultReq c) {
      return consults.consult(c.cmd());
    }
    if (query instanceof Observed o) {
      return plans.observed(o); // for the learned placement only
    }
    if (query instanceof PlanReq r) {
      return plans.plan(r.max());
    }
    if (query instanceof PartitionTableReq) {
      return table.table();
    }
    if (query instanceof StatsReq) {
      return new OracleMapReply(map.copy());
    }
    throw new IllegalArgumentException("the oracle answers no " + (query == null ? null : query.getClass().getSimpleName()));
  }

  @Override
  public Execution deliver(ExecutionContext ctx) {
    Object p = ctx.payload();
    String invalid = Validation.check(p, ctx.dests(), cluster.oracle(), ctx.partitions());
    if (invalid != null) {
      if (p instanceof PartitionChange) {
        // The partitions it reached wait for the table (their moves out wait with them).
        table.send(ctx, partitionsOf(ctx));
      }
      return Execution.error(invalid);
    }
    if (p instanceof PartitionChange c) {
      return table.change(ctx, c, partitionsOf(ctx));
    }
    if (p instanceof MoveReq m) {
      // The map follows a move once its destination has the objects (its Begun): a move whose
      // values could not leave the source leaves the objects where they are, and the map with
      // them; and a partition the map calls empty has nothing in transit. Until then the move
      // waits in each object's chain, so that the commands on its objects delivered after it see
      // the map it leaves.
      for (ObjId id : new TreeSet<>(Arrays.asList(m.objs()))) {
        chains.add(id, ctx.id());
      }
      return Execution.resumeLater(List.of(m.dst()));
    } else if (p instanceof CreateReq || p instanceof DeleteReq || p instanceof SsmrReq) {
      Command cmd = Verdicts.commandOf(p);
      if (cmd.kind() == Command.Kind.ACCESS) {
        return Execution.done();
      }
      chains.add(cmd.target(), ctx.id());
      return Execution.resumeLater(partitionsOf(ctx));
    }
    return Execution.error("the oracle cannot execute " + (p == null ? null : p.getClass().getSimpleName()));
  }

  /*
   * Runs once every partition destination has sent Begun, and again (see resumeLater) whenever
   * another message completes while an earlier command on the same object is still waiting.
   */
  @Override
  public Execution resume(ExecutionContext ctx) {
    Object p = ctx.payload();
    if (p instanceof MoveReq m) {
      return resumeMove(ctx, m);
    }
    if (!(p instanceof CreateReq || p instanceof DeleteReq || p instanceof SsmrReq)) {
      return Execution.error("nothing to resume for " + (p == null ? null : p.getClass().getSimpleName()));
    }
    ObjId id = Verdicts.commandOf(p).target();
    // A partition that ended the command without executing it (a reused message id) sends no
    // Begun: the command is refused at once, wherever it is in the chain (review N4).
    boolean abandoned = !ctx.abandonedBy().isEmpty();
    if (!abandoned && !chains.isHead(id, ctx.id())) {
      return Execution.resumeLater(partitionsOf(ctx)); // an earlier command on the object goes first
    }
    if (abandoned) {
      verdicts.refuseAbandoned(ctx, partitionsOf(ctx));
    } else {
      verdicts.decide(ctx, p, partitionsOf(ctx));
    }
    chains.pop(id, ctx.id());
    return Execution.done();
  }

  /** Follows a move in the map once it is at the head of its objects' chains and its destination has begun. */
  private Execution resumeMove(ExecutionContext ctx, MoveReq m) {
    TreeSet<ObjId> ids = new TreeSet<>(Arrays.asList(m.objs()));
    // A destination that abandoned the move (a reused message id) did not take the objects:
    // the map stays, wherever the move is in the chains (review N4).
    boolean abandoned = !ctx.abandonedBy().isEmpty();
    for (ObjId id : ids) {
      if (!abandoned && !chains.isHead(id, ctx.id())) {
        return Execution.resumeLater(List.of(m.dst())); // an earlier command on an object goes first
      }
    }
    String refusal = abandoned ? "abandoned by " + ctx.abandonedBy() : Verdicts.refusal(ctx, List.of(m.dst()));
    if (refusal != null) {
      LOG.info("{}: move {} from {} to {} not installed; the map keeps them at the source: {}", self, ctx.id(),
          m.src(), m.dst(), refusal);
    }
    for (ObjId id : ids) {
      if (refusal == null) {
        map.move(id, m.src(), m.dst());
      }
      chains.pop(id, ctx.id());
    }
    return Execution.done();
  }

  /** The partition destinations of a message: its destinations but the oracle. */
  private List<GroupId> partitionsOf(ExecutionContext ctx) {
    List<GroupId> out = new ArrayList<>();
    for (GroupId g : ctx.dests()) {
      if (!g.equals(self)) {
        out.add(g);
      }
    }
    return out;
  }

  @Override
  public byte[] snapshot() {
    return snapshots.write();
  }

  @Override
  public void restore(byte[] state) {
    snapshots.read(state);
  }
}
