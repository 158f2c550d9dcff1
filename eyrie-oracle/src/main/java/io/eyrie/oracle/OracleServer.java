package io.eyrie.oracle;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.protocol.Msgs;
import io.eyrie.core.protocol.Msgs.ConsultReq;
import io.eyrie.core.protocol.Msgs.CreateReq;
import io.eyrie.core.protocol.Msgs.DeleteReq;
import io.eyrie.core.protocol.Msgs.MoveReq;
import io.eyrie.core.protocol.Msgs.Prophecy;
import io.eyrie.core.protocol.Msgs.SsmrReq;
import io.eyrie.core.protocol.Msgs.Verdict;
import io.eyrie.core.protocol.Validation;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Deliverer;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The oracle's protocol (the paper's Algorithm 4) around an application's
 * {@link OracleStateMachine}: the location map, consults answered with prophecies, the verdicts
 * on creates and deletes, moves followed, and the snapshot. The application's class only
 * supplies the placement hooks, so it cannot change the protocol.
 *
 * <p>Execution atomicity (docs/design.md): a create or delete changes the map that consults
 * read, and its verdict lets the partitions finish it, so both happen only once every partition
 * destination has reached the command at the head of its queue (its Begun item). The command
 * waits for that with {@link Execution#resumeLater}, so the oracle goes on with other commands
 * meanwhile; what keeps the map right is that the changes to one object are applied in the
 * oracle's delivery order: a create, delete or move of an object that has an earlier one still
 * waiting is queued behind it ({@link #chains}) and applied when its turn comes. A move waits for
 * its destination's Begun, which says whether the objects arrived: the map follows only a move
 * that took place. A create waits for a Begun that may refuse it (the partition's application could not
 * make the object): then the verdict is REFUSED and the map never names the object.
 */
final class OracleServer implements Deliverer {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(OracleServer.class);
  private final OracleStateMachine app;
  private final TreeMap<ObjId, GroupId> locations = new TreeMap<>();
  private final TreeMap<GroupId, Long> load = new TreeMap<>();
  /**
   * Per object with a create, delete or move waiting for its partitions' Begun: the commands on
   * it in delivery order (message ids), first the oldest waiting one. Replicated and in the
   * snapshot.
   */
  private final TreeMap<ObjId, ArrayDeque<MsgId>> chains = new TreeMap<>();

  private final GroupId self;
  private final ClusterConfig cluster;
  /**
   * The partition table: every partition the oracle may place objects in, true while active
   * (takes new and gathered objects), false once retired (drained by the rebalancer's plan).
   * Starts with the cluster file's partitions; changed by {@link Msgs.PartitionChange}.
   * Replicated and in the snapshot.
   */
  private final TreeMap<GroupId, Boolean> table = new TreeMap<>();
  /** The active partitions, ascending (recomputed from {@link #table} when it changes). */
  private volatile List<GroupId> active = List.of();
  private final Codec codec;
  /** The learned placement (GRAPH mode), or null (the paper's rule). Not replicated. */
  private final GraphPlacement graph;

  OracleServer(OracleStateMachine app, GroupId self, ClusterConfig cluster, Codec codec) {
    this.app = app;
    this.self = self;
    this.cluster = cluster;
    this.codec = codec;
    this.graph = app.placement() == OracleStateMachine.Placement.GRAPH ? new GraphPlacement() : null;
    initialTable();
  }

  /**
   * The cluster file's partitions, all active: the {@code cluster} a node gives a replica is the
   * cluster file's at every replica, even on a node that learned added partitions (review N1), so
   * every replica that replays the log from its start starts from the same table.
   */
  private void initialTable() {
    table.clear();
    for (GroupId p : cluster.partitions()) {
      table.put(p, true);
      load.putIfAbsent(p, 0L);
    }
    tableChanged();
  }

  private void tableChanged() {
    List<GroupId> a = new ArrayList<>();
    table.forEach((g, on) -> {
      if (on) {
        a.add(g);
      }
    });
    active = List.copyOf(a);
  }

  /** The active partitions, ascending: where new objects and gathered ones go. */
  List<GroupId> partitions() {
    return active;
  }

  private boolean isActive(GroupId g) {
    return g != null && Boolean.TRUE.equals(table.get(g));
  }

  /** The partition table with the objects the map places in each partition. */
  io.eyrie.core.PartitionTable table() {
    TreeMap<GroupId, io.eyrie.core.PartitionTable.State> states = new TreeMap<>();
    TreeMap<GroupId, Long> objects = new TreeMap<>();
    table.forEach((g, on) -> {
      states.put(g, on ? io.eyrie.core.PartitionTable.State.ACTIVE : io.eyrie.core.PartitionTable.State.RETIRED);
      objects.put(g, load.getOrDefault(g, 0L));
    });
    return new io.eyrie.core.PartitionTable(states, objects);
  }

  /** The active partition with the fewest objects in {@code counts} (ties to the lowest). */
  private GroupId leastLoaded(Map<GroupId, Long> counts) {
    GroupId best = null;
    for (GroupId p : active) {
      if (best == null || counts.getOrDefault(p, 0L) < counts.getOrDefault(best, 0L)) {
        best = p;
      }
    }
    return best;
  }

  /**
   * Where a new object goes: the application's choice if it is an active partition, else
   * (a retired or unknown partition, or none) the active partition with the fewest objects.
   */
  private GroupId placement(Command cmd, Map<GroupId, Long> counts) {
    GroupId at = app.getObjectPlacement(cmd);
    return isActive(at) ? at : leastLoaded(counts);
  }

  /**
   * Applies a change of the partition table (ordered, so the same at every replica). Retiring
   * the last active partition is refused: new objects would have nowhere to go. The change goes
   * to every partition of the table too, and each gets the table it leaves (refused or not), so
   * that every partition knows, at the same point of the order as the oracle, which partitions
   * are retired: no move ships into one after its retire (a drained partition stays empty). A
   * change that misses a partition of the table is refused: the client learns the cluster again
   * and sends it to all.
   */
  private Execution changePartition(ExecutionContext ctx, Msgs.PartitionChange c) {
    GroupId g = c.partition();
    String refused = null;
    java.util.TreeSet<GroupId> missing = new java.util.TreeSet<>(table.keySet());
    missing.removeAll(ctx.dests());
    if (!missing.isEmpty()) {
      refused = "a partition change goes to every partition of the oracle's table; it missed " + missing
          + " (learn the cluster again and send it to all)";
    } else if (c.active()) {
      table.put(g, true);
      load.putIfAbsent(g, 0L);
    } else if (!table.containsKey(g)) {
      refused = "partition " + g + " is not in the oracle's table";
    } else if (isActive(g) && active.size() == 1) {
      refused = "cannot retire " + g + ": it is the last active partition";
    } else {
      table.put(g, false);
    }
    tableChanged();
    io.eyrie.core.PartitionTable t = sendTable(ctx);
    return refused == null ? Execution.reply(t) : Execution.error(refused);
  }

  /** Sends the partition table to the partitions a partition change reached; returns it. */
  private io.eyrie.core.PartitionTable sendTable(ExecutionContext ctx) {
    io.eyrie.core.PartitionTable t = table();
    for (GroupId g : partitionsOf(ctx)) {
      if (ctx.partitions().contains(g)) {
        ctx.send(g, t);
      }
    }
    return t;
  }

  /**
   * The objects per partition. While a consult chooses where a new object goes, it also counts
   * the creates this replica prophesied in the last {@link #PROPHECY_HOLD_NANOS} that have not
   * been applied yet: concurrent creates all consult before any is applied, and by the map alone
   * they would all go to the same emptiest partition. Only consults (leader-local, hints) see
   * that; the log's apply path sees the replicated counts, so it stays deterministic.
   */
  TreeMap<GroupId, Long> load() {
    if (!consulting || prophesied.isEmpty()) {
      return load;
    }
    TreeMap<GroupId, Long> l = new TreeMap<>(load);
    for (Prophesied p : prophesied) {
      l.merge(p.at(), 1L, Long::sum);
    }
    return l;
  }

  /** A create this replica prophesied to a partition, and when (System.nanoTime). */
  private record Prophesied(GroupId at, long nanos) {}

  /** How long a prophesied create counts toward its partition's load if it is not applied. */
  static final long PROPHECY_HOLD_NANOS = 5_000_000_000L;
  private final ArrayDeque<Prophesied> prophesied = new ArrayDeque<>();
  private boolean consulting;

  private GroupId placeNew(Command cmd) {
    long now = System.nanoTime();
    while (!prophesied.isEmpty() && (now - prophesied.peek().nanos() > PROPHECY_HOLD_NANOS || prophesied.size() > 10_000)) {
      prophesied.poll();
    }
    GroupId at;
    consulting = true;
    try {
      at = placement(cmd, load());
    } finally {
      consulting = false;
    }
    if (at != null) {
      prophesied.add(new Prophesied(at, now));
    }
    return at;
  }

  /** The default target of a multi-partition command: see {@link OracleStateMachine#getTargetPartition}. */
  GroupId defaultTarget(Map<ObjId, GroupId> where) {
    return graph != null ? graph.target(where) : io.eyrie.core.protocol.Locations.mostCommon(where);
  }

  /** The learned placement, or null outside GRAPH mode (for tests). */
  GraphPlacement graphPlacement() {
    return graph;
  }

  GroupId locationOf(ObjId id) {
    return locations.get(id);
  }

  @Override
  public Object query(Object query) {
    if (query instanceof ConsultReq c) {
      return consult(c.cmd());
    }
    if (query instanceof Msgs.Observed o) {
      // Accesses a partition sampled (no consult saw them): for the learned placement only.
      if (graph != null && o.accesses() != null) {
        for (long[] objects : o.accesses()) {
          List<ObjId> ids = new ArrayList<>(objects.length);
          for (long id : objects) {
            ids.add(ObjId.valueOf(id));
          }
          graph.observe(ids, Math.max(1.0, o.weight()));
        }
        // No plan from here: the rebalancer hands every partition's samples in one round and
        // then asks for a plan (PlanReq). A plan started after the first partition's samples
        // would weigh the whole interval's workload on that partition's objects alone, see an
        // access imbalance that is not there, and reshuffle communities to fix it.
      }
      return o.accesses() == null ? 0 : o.accesses().size();
    }
    if (query instanceof Msgs.PlanReq r) {
      return planMoves(r.max());
    }
    if (query instanceof Msgs.PartitionTableReq) {
      return table();
    }
    if (query instanceof Msgs.StatsReq) {
      return new Msgs.OracleMapReply(new TreeMap<>(locations));
    }
    throw new IllegalArgumentException("the oracle answers no " + (query == null ? null : query.getClass().getSimpleName()));
  }

  /**
   * Objects to move, at most {@code max}: first, in every placement mode, objects in retired
   * partitions (draining), each to the plan's partition if it is active, else to the active
   * partition with the fewest objects counting the moves already chosen; then (GRAPH mode, once
   * a plan exists) objects the learned plan wants in another active partition.
   */
  private Msgs.PlanMoves planMoves(int max) {
    TreeMap<ObjId, GroupId> from = new TreeMap<>();
    TreeMap<ObjId, GroupId> to = new TreeMap<>();
    if (graph != null) {
      graph.maybePlan(() -> locations, active);
    }
    io.eyrie.oracle.placement.PlacementPlanner.Plan plan = graph == null ? null : graph.plan();
    if (active.size() < table.size()) {
      TreeMap<GroupId, Long> counts = new TreeMap<>(load);
      for (Map.Entry<ObjId, GroupId> e : locations.entrySet()) {
        if (from.size() >= Math.max(0, max)) {
          break;
        }
        if (!isActive(e.getValue()) && !chains.containsKey(e.getKey())) {
          GroupId want = plan == null ? null : plan.placement().get(e.getKey());
          GroupId dst = isActive(want) ? want : leastLoaded(counts);
          counts.merge(dst, 1L, Long::sum);
          from.put(e.getKey(), e.getValue());
          to.put(e.getKey(), dst);
        }
      }
    }
    if (plan != null) {
      for (Map.Entry<ObjId, GroupId> e : plan.placement().entrySet()) {
        if (from.size() >= Math.max(0, max)) {
          break;
        }
        GroupId at = locations.get(e.getKey());
        if (at != null && !at.equals(e.getValue()) && isActive(e.getValue()) && !from.containsKey(e.getKey())
            && !chains.containsKey(e.getKey())) {
          from.put(e.getKey(), at);
          to.put(e.getKey(), e.getValue());
        }
      }
    }
    return new Msgs.PlanMoves(from, to);
  }

  private Prophecy consult(Command cmd) {
    switch (cmd.kind()) {
      case ACCESS -> {
        TreeMap<ObjId, GroupId> where = new TreeMap<>();
        for (ObjId id : app.extractObjects(cmd)) {
          GroupId g = locations.get(id);
          if (g == null) {
            return Prophecy.nok(id);
          }
          where.put(id, g);
        }
        if (graph != null && where.size() > 1) {
          graph.observe(new ArrayList<>(where.keySet()));
          graph.maybePlan(() -> locations, active);
        }
        GroupId target = app.getTargetPartition(where);
        if (target != null && !isActive(target)) {
          target = activeTarget(where);
        }
        return new Prophecy(Msgs.RETRY, where, target);
      }
      case CREATE -> {
        if (locations.containsKey(cmd.target())) {
          return Prophecy.nok(cmd.target());
        }
        return new Prophecy(Msgs.RETRY, new TreeMap<>(), placeNew(cmd));
      }
      case DELETE -> {
        GroupId g = locations.get(cmd.target());
        if (g == null) {
          return Prophecy.nok(cmd.target());
        }
        TreeMap<ObjId, GroupId> where = new TreeMap<>();
        where.put(cmd.target(), g);
        return new Prophecy(Msgs.RETRY, where, g);
      }
      default -> throw new IllegalArgumentException("unknown command kind " + cmd.kind());
    }
  }

  /**
   * Where to gather objects when the application's target is not an active partition: the
   * active partition already holding most of them, else the one with the fewest objects.
   */
  private GroupId activeTarget(Map<ObjId, GroupId> where) {
    TreeMap<ObjId, GroupId> inActive = new TreeMap<>();
    where.forEach((id, g) -> {
      if (isActive(g)) {
        inActive.put(id, g);
      }
    });
    return inActive.isEmpty() ? leastLoaded(load()) : io.eyrie.core.protocol.Locations.mostCommon(inActive);
  }

  @Override
  public Execution deliver(ExecutionContext ctx) {
    Object p = ctx.payload();
    String invalid = Validation.check(p, ctx.dests(), cluster.oracle(), ctx.partitions());
    if (invalid != null) {
      if (p instanceof Msgs.PartitionChange) {
        sendTable(ctx); // the partitions it reached wait for the table (their moves out wait with them)
      }
      return Execution.error(invalid);
    }
    if (p instanceof Msgs.PartitionChange c) {
      return changePartition(ctx, c);
    }
    if (p instanceof MoveReq m) {
      // The map follows a move once its destination has the objects (its Begun): a move whose
      // values could not leave the source leaves the objects where they are, and the map with
      // them; and a partition the map calls empty has nothing in transit. Until then the move
      // waits in each object's chain, so that the commands on its objects delivered after it see
      // the map it leaves.
      for (ObjId id : new java.util.TreeSet<>(java.util.Arrays.asList(m.objs()))) {
        chains.computeIfAbsent(id, k -> new ArrayDeque<>()).add(ctx.id());
      }
      return Execution.resumeLater(List.of(m.dst()));
    } else if (p instanceof CreateReq || p instanceof DeleteReq || p instanceof SsmrReq) {
      Command cmd = p instanceof CreateReq c ? c.cmd() : p instanceof DeleteReq d ? d.cmd() : ((SsmrReq) p).cmd();
      if (cmd.kind() == Command.Kind.ACCESS) {
        return Execution.done();
      }
      chains.computeIfAbsent(cmd.target(), k -> new ArrayDeque<>()).add(ctx.id());
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
      java.util.TreeSet<ObjId> ids = new java.util.TreeSet<>(java.util.Arrays.asList(m.objs()));
      // A destination that abandoned the move (a reused message id) did not take the objects:
      // the map stays, wherever the move is in the chains (review N4).
      boolean abandoned = !ctx.abandonedBy().isEmpty();
      for (ObjId id : ids) {
        ArrayDeque<MsgId> chain = chains.get(id);
        if (!abandoned && (chain == null || !ctx.id().equals(chain.peek()))) {
          return Execution.resumeLater(List.of(m.dst())); // an earlier command on an object goes first
        }
      }
      String refusal = abandoned ? "abandoned by " + ctx.abandonedBy() : refusal(ctx, List.of(m.dst()));
      if (refusal != null) {
        LOG.info("{}: move {} from {} to {} not installed; the map keeps them at the source: {}", self, ctx.id(),
            m.src(), m.dst(), refusal);
      }
      for (ObjId id : ids) {
        if (refusal == null) {
          move(id, m.src(), m.dst());
        }
        pop(id, ctx.id());
      }
      return Execution.done();
    }
    Command cmd = p instanceof CreateReq c ? c.cmd() : p instanceof DeleteReq d ? d.cmd()
        : p instanceof SsmrReq s ? s.cmd() : null;
    if (cmd == null) {
      return Execution.error("nothing to resume for " + (p == null ? null : p.getClass().getSimpleName()));
    }
    ObjId id = cmd.target();
    ArrayDeque<MsgId> chain = chains.get(id);
    // A partition that ended the command without executing it (a reused message id) sends no
    // Begun: the command is refused at once, wherever it is in the chain (review N4).
    boolean abandoned = !ctx.abandonedBy().isEmpty();
    if (!abandoned && (chain == null || !ctx.id().equals(chain.peek()))) {
      return Execution.resumeLater(partitionsOf(ctx)); // an earlier command on the object goes first
    }
    if (abandoned) {
      Verdict v = new Verdict(Msgs.REFUSED, null, "its message id was reused with other content; "
          + ctx.abandonedBy() + " did not execute it");
      for (GroupId g : partitionsOf(ctx)) {
        if (!ctx.abandonedBy().contains(g)) {
          ctx.send(g, v);
        }
      }
    } else {
      decide(ctx, p);
    }
    pop(id, ctx.id());
    return Execution.done();
  }

  /**
   * Takes a command out of an object's chain: its head, or anywhere for one a destination
   * abandoned.
   */
  private void pop(ObjId id, MsgId msg) {
    ArrayDeque<MsgId> chain = chains.get(id);
    if (chain == null) {
      return;
    }
    chain.remove(msg);
    if (chain.isEmpty()) {
      chains.remove(id);
    }
  }

  /** The first refusal in the Begun items the given partitions sent for this command, or null. */
  private static String refusal(ExecutionContext ctx, List<GroupId> from) {
    for (GroupId g : from) {
      for (Object item : ctx.received(g)) {
        if (item instanceof Msgs.Begun b && b.refusal() != null) {
          return b.refusal();
        }
      }
    }
    return null;
  }

  /**
   * Decides a create or delete on the map, applies it and sends the verdict to every partition
   * destination. If an application hook ({@code created}, {@code deleted}, the placement) throws,
   * the map is put back as it was and the verdict is REFUSED: the partitions release the object
   * and answer the client REFUSED, and the object's chain goes on as after any verdict. The
   * exception depends only on the log (the hooks are deterministic), so every replica does the
   * same; a {@link VirtualMachineError} depends on the replica and is rethrown (it stops it).
   */
  private void decide(ExecutionContext ctx, Object p) {
    ObjId id = (p instanceof CreateReq c ? c.cmd() : p instanceof DeleteReq d ? d.cmd() : ((SsmrReq) p).cmd()).target();
    GroupId before = locations.get(id);
    Verdict v;
    try {
      String cannot = refusal(ctx, partitionsOf(ctx));
      boolean creates = p instanceof CreateReq || ((p instanceof SsmrReq s) && s.cmd().kind() == Command.Kind.CREATE);
      if (creates && cannot != null && !locations.containsKey(id)) {
        // A partition could not make the object: the map never names it.
        v = new Verdict(Msgs.REFUSED, null, cannot);
      } else {
        v = verdict(ctx, p);
      }
    } catch (VirtualMachineError e) {
      throw e;
    } catch (Throwable e) {
      GroupId now = before == null ? locations.remove(id) : locations.put(id, before);
      if (now != null) {
        load.merge(now, -1L, Long::sum);
      }
      if (before != null) {
        load.merge(before, 1L, Long::sum);
      }
      LOG.warn("{}: the oracle's application failed on {} of {}; refused: {}", self, ctx.id(), id, e.toString());
      String why = "the oracle's application failed: " + e;
      v = new Verdict(Msgs.REFUSED, null, why.length() <= Verdict.REASON_MAX ? why : why.substring(0, Verdict.REASON_MAX));
    }
    for (GroupId g : partitionsOf(ctx)) {
      ctx.send(g, v);
    }
  }

  /** The verdict on a create or delete, with the map and the application's hooks changed by it. */
  private Verdict verdict(ExecutionContext ctx, Object p) {
    if (p instanceof CreateReq c) {
      ObjId id = c.cmd().target();
      // A partition retired since the consult that chose it takes nothing new: the client asks again.
      int status = locations.containsKey(id) ? Msgs.NOK : isActive(c.partition()) ? Msgs.OK : Msgs.RETRY;
      if (status == Msgs.OK) {
        place(id, c.partition());
        app.created(c.cmd(), c.partition());
      }
      return new Verdict(status, status == Msgs.RETRY ? null : c.partition());
    } else if (p instanceof DeleteReq d) {
      ObjId id = d.cmd().target();
      GroupId at = locations.get(id);
      int status;
      if (at == null) {
        status = Msgs.NOK;
      } else if (at.equals(d.partition())) {
        place(id, null);
        app.deleted(id);
        status = Msgs.OK;
      } else {
        status = Msgs.RETRY;
      }
      return new Verdict(status, at);
    } else {
      Command cmd = ((SsmrReq) p).cmd();
      Verdict v;
      GroupId at = locations.get(cmd.target());
      if (cmd.kind() == Command.Kind.CREATE) {
        if (at != null) {
          v = new Verdict(Msgs.NOK, at);
        } else {
          at = placement(cmd, load);
          if (!ctx.dests().contains(at)) {
            // The client's view of the cluster missed a partition (one added since): it must
            // learn it and send again; only a command to every partition may place anywhere.
            v = new Verdict(Msgs.RETRY, null);
          } else {
            place(cmd.target(), at);
            app.created(cmd, at);
            v = new Verdict(Msgs.OK, at);
          }
        }
      } else if (at != null && !ctx.dests().contains(at)) {
        v = new Verdict(Msgs.RETRY, null);
      } else {
        if (at != null) {
          place(cmd.target(), null);
          app.deleted(cmd.target());
        }
        v = new Verdict(at != null ? Msgs.OK : Msgs.NOK, at);
      }
      return v;
    }
  }

  private void move(ObjId id, GroupId src, GroupId dst) {
    if (src.equals(locations.get(id))) {
      place(id, dst);
    }
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
      if (old == null) {
        // The create a consult prophesied here (if any) is now in the map itself.
        for (java.util.Iterator<Prophesied> it = prophesied.iterator(); it.hasNext(); ) {
          if (it.next().at().equals(at)) {
            it.remove();
            break;
          }
        }
      }
    }
  }

  @Override
  public byte[] snapshot() {
    Output out = new Output(4096, -1);
    out.writeVarInt(locations.size(), true);
    for (Map.Entry<ObjId, GroupId> e : locations.entrySet()) {
      out.writeLong(e.getKey().value());
      out.writeString(e.getValue().name());
    }
    out.writeVarInt(chains.size(), true);
    for (Map.Entry<ObjId, ArrayDeque<MsgId>> e : chains.entrySet()) {
      out.writeLong(e.getKey().value());
      out.writeVarInt(e.getValue().size(), true);
      for (MsgId m : e.getValue()) {
        out.writeBoolean(true); // (false marked a queued move, in snapshots before issue 26)
        out.writeLong(m.client());
        out.writeLong(m.seq());
        out.writeVarInt(m.attempt(), true);
      }
    }
    Object extra = app.extraState();
    byte[] bytes = extra == null ? new byte[0] : codec.encode(extra);
    out.writeVarInt(bytes.length, true);
    out.writeBytes(bytes);
    out.writeVarInt(table.size(), true);
    for (Map.Entry<GroupId, Boolean> e : table.entrySet()) {
      out.writeString(e.getKey().name());
      out.writeBoolean(e.getValue());
    }
    return out.toBytes();
  }

  @Override
  public void restore(byte[] state) {
    locations.clear();
    chains.clear();
    load.clear();
    table.clear();
    if (state.length == 0) { // the initial state: the cluster file's partitions
      initialTable();
      app.restoreExtraState(null);
      return;
    }
    Input in = new Input(state);
    int n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      place(ObjId.valueOf(in.readLong()), GroupId.valueOf(in.readString()));
    }
    int c = in.readVarInt(true);
    for (int i = 0; i < c; i++) {
      ArrayDeque<MsgId> chain = new ArrayDeque<>();
      chains.put(ObjId.valueOf(in.readLong()), chain);
      int k = in.readVarInt(true);
      for (int j = 0; j < k; j++) {
        if (!in.readBoolean()) {
          throw new IllegalStateException("an oracle snapshot written before issue 26 (a queued move): this version"
              + " cannot read it; partition snapshots of that version are not readable either");
        }
        chain.add(MsgId.valueOf(in.readLong(), in.readLong(), in.readVarInt(true)));
      }
    }
    byte[] extra = in.readBytes(in.readVarInt(true));
    if (in.position() < state.length) {
      table.clear();
      int t = in.readVarInt(true);
      for (int i = 0; i < t; i++) {
        GroupId g = GroupId.valueOf(in.readString());
        table.put(g, in.readBoolean());
        load.putIfAbsent(g, 0L);
      }
      tableChanged();
    } else {
      initialTable(); // a snapshot from before the partition table
    }
    app.restoreExtraState(extra.length == 0 ? null : codec.decode(extra));
  }
}
