package io.eyrie.core;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.core.protocol.Msgs;
import io.eyrie.core.protocol.Msgs.AccessReq;
import io.eyrie.core.protocol.Msgs.Begun;
import io.eyrie.core.protocol.Msgs.CoreReply;
import io.eyrie.core.protocol.Msgs.CreateReq;
import io.eyrie.core.protocol.Msgs.DeleteReq;
import io.eyrie.core.protocol.Msgs.MoveReq;
import io.eyrie.core.protocol.Msgs.SsmrReq;
import io.eyrie.core.protocol.Msgs.Values;
import io.eyrie.core.protocol.Msgs.Verdict;
import io.eyrie.core.protocol.Validation;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Deliverer;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The server proxy of one partition replica: the paper's Algorithm 3 (DS-SMR) and S-SMR's
 * Algorithm 1 around an application's {@link StateMachine}. It holds the partition's objects,
 * checks locality, moves objects in and out, exchanges values for S-SMR commands, waits for the
 * oracle's verdict on creates and deletes, and snapshots the partition. The application's class
 * only sees its hooks, so it cannot change the protocol.
 */
final class PartitionServer implements Deliverer {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(PartitionServer.class);
  private final StateMachine app;
  private final TreeMap<ObjId, PRObject> objects = new TreeMap<>();
  private final GroupId self;
  private final ClusterConfig cluster;
  private final Codec codec;
  private Map<ObjId, PRObject> view;
  /** The command being executed on local objects only: getObject returns its objects alone. */
  private Command running;
  /**
   * The objects of the commands that started here and wait for another group off the queue
   * ({@link Execution#resumeLater}): an S-SMR access for the other partitions' values, a create or
   * delete for the oracle's verdict, a move's destination for the source's values. Declared
   * objects, present or not. Replicated (in the snapshot).
   */
  private final java.util.TreeSet<ObjId> held = new java.util.TreeSet<>();
  /**
   * The commands that could not start because an object of theirs is held or claimed by a command
   * blocked before them ({@link Execution#blocked}), in delivery order, with their objects. With
   * {@link #held} this keeps every object's commands in delivery order while commands on other
   * objects go on (docs/design.md 6). Replicated (in the snapshot).
   */
  private final java.util.LinkedHashMap<MsgId, ObjId[]> waiting = new java.util.LinkedHashMap<>();
  /**
   * The objects of the creates that started here and wait for the oracle's verdict, made by the
   * application when the create started ({@link #prepareCreate}): a create the application cannot
   * make is refused before the oracle changes its map. Installed on an OK verdict that places the
   * object here, dropped on any other. The object is held meanwhile, so there is at most one per
   * id. Replicated (in the snapshot).
   */
  private final TreeMap<ObjId, PRObject> creating = new TreeMap<>();
  /**
   * The partitions retired in the oracle's table, as of the last partition change delivered here
   * (each goes to every partition of the table, which learns the table from the oracle): no move
   * ships objects into one of them, so a drained partition stays empty. Replicated (in the
   * snapshot).
   */
  private final java.util.TreeSet<GroupId> retired = new java.util.TreeSet<>();
  /**
   * A partition change delivered here whose table has not come from the oracle yet, or null: a
   * move out of this partition waits for it (blocked), so that it ships by the table in force at
   * its point of the order. Replicated (in the snapshot).
   */
  private final java.util.TreeSet<MsgId> tableChanges = new java.util.TreeSet<>();
  private long executed;
  private long multiPartition;
  private long retries;

  PartitionServer(StateMachine app, GroupId self, ClusterConfig cluster, Codec codec) {
    this.app = app;
    this.self = self;
    this.cluster = cluster;
    this.codec = codec;
    app.attach(this);
  }

  StateMachine app() {
    return app;
  }

  GroupId partition() {
    return self;
  }

  /** The object the running command sees: from its combined view during S-SMR, else local. */
  PRObject object(ObjId id) {
    if (view != null) {
      return view.get(id);
    }
    // Only the command's declared objects: another may be held by an S-SMR access in progress,
    // which is ordered before this command.
    return running == null || running.objects().contains(id) ? objects.get(id) : null;
  }

  java.util.Set<ObjId> localIds() {
    return java.util.Collections.unmodifiableSet(objects.keySet());
  }

  @Override
  public Execution deliver(ExecutionContext ctx) {
    Object p = ctx.payload();
    String invalid = Validation.check(p, ctx.dests(), cluster.oracle(), ctx.partitions());
    if (invalid != null) {
      waiting.remove(ctx.id()); // (validation never refuses what it once let through; in case)
      if (p instanceof MoveReq m && self.equals(m.dst()) && ctx.dests().contains(cluster.oracle())) {
        // The oracle waits for the destination's word on a move: give it, or its chain waits for ever.
        ctx.send(cluster.oracle(), Begun.refused(self, invalid));
      }
      return Execution.error(invalid);
    }
    if (p instanceof Msgs.PartitionChange) {
      // The oracle decides the change and sends the table it leaves; until then moves out of
      // here wait, so that none ships into a partition just retired.
      tableChanges.add(ctx.id());
      return Execution.resumeLater(List.of(cluster.oracle()));
    }
    ObjId[] touched = objectsOf(p);
    // A move out of here waits for the tables of the changes before it; it claims its objects
    // meanwhile, as any blocked command does, so that later commands on them keep their order.
    boolean waitsForTable = !tableChanges.isEmpty() && p instanceof MoveReq m && self.equals(m.src());
    if (waitsForTable || mustWait(ctx.id(), java.util.Arrays.asList(touched))) {
      waiting.putIfAbsent(ctx.id(), touched);
      return Execution.blocked();
    }
    waiting.remove(ctx.id());
    if (p instanceof AccessReq a) {
      for (ObjId id : a.cmd().objects()) {
        if (!objects.containsKey(id)) {
          retries++;
          return Execution.reply(CoreReply.retry(null));
        }
      }
      sample(a.cmd());
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
        // The channel encodes the values now; only once they are encoded do they leave. The
        // oracle moves its map when the destination has them (or leaves it, if they did not leave).
        String failed;
        if (retired.contains(m.dst())) {
          failed = "partition " + m.dst() + " is retired: no move brings objects into it";
          ctx.send(m.dst(), Values.failed(failed));
        } else {
          failed = ship(ctx, List.of(m.dst()), out);
        }
        if (failed != null) {
          return Execution.error(failed);
        }
        out.keySet().forEach(objects::remove);
        return Execution.reply(CoreReply.ok(null));
      }
      return waitHolding(ctx, touched, List.of(m.src()));
    } else if (p instanceof CreateReq || p instanceof DeleteReq) {
      // Execution atomicity: the oracle changes its map (which consults read) and sends its
      // verdict only after this partition has reached the command here, so nothing ordered
      // before it here can observe the change, and nothing after it can miss it. A create is
      // made now, so that one the application cannot make is refused before the map names it.
      String refusal = p instanceof CreateReq c && self.equals(c.partition()) ? prepareCreate(c.cmd()) : null;
      ctx.send(cluster.oracle(), refusal == null ? new Begun(self) : Begun.refused(self, refusal));
      return waitHolding(ctx, touched, List.of(cluster.oracle()));
    } else if (p instanceof SsmrReq s) {
      if (s.cmd().kind() != Command.Kind.ACCESS) {
        // Any destination may be where the oracle places a new object: each makes it (the hook
        // is deterministic, so each gets the same outcome).
        String refusal = s.cmd().kind() == Command.Kind.CREATE ? prepareCreate(s.cmd()) : null;
        ctx.send(cluster.oracle(), refusal == null ? new Begun(self) : Begun.refused(self, refusal));
        return waitHolding(ctx, touched, List.of(cluster.oracle()));
      }
      List<GroupId> others = otherPartitions(ctx);
      TreeMap<ObjId, PRObject> mine = new TreeMap<>();
      for (ObjId id : s.cmd().objects()) {
        PRObject o = objects.get(id);
        if (o != null) {
          PRObject copy = others.isEmpty() ? o : app.copyForPartitions(o, s.cmd());
          if (copy == null || !id.equals(copy.getId())) {
            return Execution.error("copyForPartitions returned " + (copy == null ? "null" : "object " + copy.getId())
                + " for object " + id);
          }
          mine.put(id, copy);
        }
      }
      String failed = ship(ctx, others, mine);
      if (failed != null) {
        return Execution.error(failed);
      }
      return others.isEmpty() ? ssmrExecute(ctx, s) : waitHolding(ctx, touched, others);
    }
    return Execution.error("a partition cannot execute " + (p == null ? null : p.getClass().getSimpleName()));
  }

  @Override
  public Execution resume(ExecutionContext ctx) {
    Object p = ctx.payload();
    for (ObjId id : objectsOf(p)) {
      held.remove(id);
    }
    if (p instanceof Msgs.PartitionChange) {
      // Whatever the oracle did, the change no longer holds moves back; a change the oracle
      // abandoned (a reused message id) changed no table.
      tableChanges.remove(ctx.id());
      if (ctx.abandonedBy().isEmpty()) {
        io.eyrie.core.PartitionTable t = (io.eyrie.core.PartitionTable) ctx.received(cluster.oracle()).get(0);
        retired.clear();
        retired.addAll(t.retired());
      }
      return Execution.done();
    }
    if (p instanceof MoveReq m) {
      // The oracle's map follows the move once the objects are here: nothing is in transit when
      // the map says a partition is empty. Every way out tells the oracle, which waits for it.
      Values v;
      try {
        v = (Values) ctx.received(m.src()).get(0);
      } catch (RuntimeException e) {
        v = Values.failed("the moved values could not be read: " + e.getMessage());
      }
      if (v.error() != null) {
        ctx.send(cluster.oracle(), Begun.refused(self, v.error()));
        return Execution.error(v.error());
      }
      objects.putAll(v.objects());
      ctx.send(cluster.oracle(), new Begun(self));
      return Execution.reply(CoreReply.ok(v.objects().size()));
    } else if (p instanceof CreateReq c) {
      return Execution.reply(create(c.cmd(), verdict(ctx)));
    } else if (p instanceof DeleteReq d) {
      return Execution.reply(delete(d.cmd(), verdict(ctx)));
    } else if (p instanceof SsmrReq s) {
      return ssmrExecute(ctx, s);
    }
    return Execution.error("nothing to resume for " + (p == null ? null : p.getClass().getSimpleName()));
  }

  /**
   * The oracle's verdict on a create or delete; REFUSED if a destination abandoned the command
   * (a reused message id: the oracle refuses it too), so that the object made for a create is
   * dropped and nothing changes, as after any refusal.
   */
  private Verdict verdict(ExecutionContext ctx) {
    if (!ctx.abandonedBy().isEmpty()) {
      return new Verdict(Msgs.REFUSED, null, "its message id was reused with other content; " + ctx.abandonedBy()
          + " did not execute it");
    }
    return (Verdict) ctx.received(cluster.oracle()).get(0);
  }

  /** The objects a message reads, writes, creates, deletes or moves. */
  private static ObjId[] objectsOf(Object p) {
    if (p instanceof AccessReq a) {
      return a.cmd().objects().toArray(new ObjId[0]);
    } else if (p instanceof SsmrReq s) {
      return s.cmd().objects().toArray(new ObjId[0]);
    } else if (p instanceof CreateReq c) {
      return c.cmd().objects().toArray(new ObjId[0]);
    } else if (p instanceof DeleteReq d) {
      return d.cmd().objects().toArray(new ObjId[0]);
    } else if (p instanceof MoveReq m) {
      return m.objs().clone();
    }
    return new ObjId[0];
  }

  /**
   * True if a message must wait: an object of it is held by a command in progress here, or
   * claimed by a command that waits to start and was delivered before it ({@code id}; every
   * waiting command counts if null, as for a read off the log).
   */
  private boolean mustWait(MsgId id, java.util.Collection<ObjId> touched) {
    if (held.isEmpty() && waiting.isEmpty()) {
      return false;
    }
    for (ObjId o : touched) {
      if (held.contains(o)) {
        return true;
      }
    }
    for (Map.Entry<MsgId, ObjId[]> e : waiting.entrySet()) {
      if (e.getKey().equals(id)) {
        return false; // only those before it count
      }
      for (ObjId a : e.getValue()) {
        if (touched.contains(a)) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * Started here (what was just sent, if anything, says so): waits for the groups off the queue,
   * holding the objects, so that only commands on other objects overtake this one.
   */
  private Execution waitHolding(ExecutionContext ctx, ObjId[] touched, List<GroupId> groups) {
    for (GroupId g : groups) {
      if (g.equals(self) || !ctx.dests().contains(g)) {
        // Validation refuses such messages; were one to pass, its wait would be refused and
        // resume never called, so nothing may stay held for it.
        return Execution.error("cannot wait for " + g + ", which is not another destination");
      }
    }
    java.util.Collections.addAll(held, touched);
    return Execution.resumeLater(groups);
  }

  /**
   * Makes the object of a create when the create starts here, before the oracle decides, and
   * keeps it aside in {@link #creating}: the application's {@code createObject} may throw, return
   * no object, one with another id, or one that cannot be encoded (it could never be moved,
   * copied or snapshotted). Any of these is reported in {@link Begun}, so the oracle refuses the
   * create and its map never names an object that no partition holds.
   *
   * @return null, or why the object cannot be created
   */
  private String prepareCreate(Command cmd) {
    PRObject o;
    // The hook makes a new object and sees none: it runs before the oracle decides, so an object
    // of the same id that lives here must not be changed by a create that will be refused.
    running = cmd;
    view = java.util.Map.of();
    try {
      o = app.createObject(cmd);
    } catch (VirtualMachineError e) {
      throw e; // depends on this replica, not on the command
    } catch (Throwable t) {
      return "createObject failed at " + self + ": " + t;
    } finally {
      running = null;
      view = null;
    }
    if (o == null || !cmd.target().equals(o.getId())) {
      return "createObject returned " + (o == null ? "null" : "an object with id " + o.getId())
          + " for object " + cmd.target();
    }
    String bad = unstorable(o);
    if (bad != null) {
      return bad;
    }
    creating.put(cmd.target(), o);
    return null;
  }

  /** The most an object may take encoded: what one channel item carries, less room for its framing. */
  static final int MAX_OBJECT_BYTES = ExecutionContext.MAX_ITEM_BYTES - 4096;

  /**
   * Null if an object can be stored here: it encodes, its encoding decodes (a class without a
   * no-argument constructor, or a serializer that cannot read what it wrote, encodes but would be
   * lost on its first move), and it fits in one channel item (else it could never move or be
   * copied to another partition). Else why not.
   */
  private String unstorable(PRObject o) {
    byte[] b;
    try {
      b = codec.encode(o);
    } catch (IllegalArgumentException e) {
      return "object " + o.getId() + " cannot be encoded: " + e.getMessage();
    }
    if (b.length > MAX_OBJECT_BYTES) {
      return "object " + o.getId() + " takes " + b.length + " bytes encoded, more than the " + MAX_OBJECT_BYTES
          + " an object may take (it could never move)";
    }
    try {
      codec.decode(b);
    } catch (IllegalArgumentException e) {
      return "object " + o.getId() + " cannot be decoded from its encoding: " + e.getMessage();
    }
    return null;
  }

  private CoreReply create(Command cmd, Verdict v) {
    PRObject made = creating.remove(cmd.target());
    if (v.status() == Msgs.REFUSED) {
      return refused(v.reason());
    }
    if (v.status() == Msgs.RETRY) {
      return CoreReply.retry(null);
    }
    if (v.status() != Msgs.OK) {
      return CoreReply.exists(cmd.target());
    }
    if (!self.equals(v.location())) {
      return CoreReply.ok(null);
    }
    if (made == null) {
      // Every create that starts here makes its object first, and the oracle places an object
      // only where one was made; nothing else can reach this line.
      LOG.error("{}: the oracle placed {} here, but no object was made when the create started", self, cmd.target());
      return CoreReply.refused("internal error: no object was made for " + cmd.target());
    }
    objects.put(made.getId(), made);
    executed++;
    return CoreReply.ok(null);
  }

  /**
   * Applies the oracle's verdict on a delete: OK removes the object wherever it is here (then
   * tells the application, which may clean up but cannot refuse: the oracle has forgotten it).
   */
  private CoreReply delete(Command cmd, Verdict v) {
    if (v.status() == Msgs.REFUSED) {
      return refused(v.reason());
    }
    if (v.status() == Msgs.OK) {
      PRObject gone = objects.remove(cmd.target());
      if (gone != null) {
        running = cmd;
        try {
          app.objectDeleted(gone, cmd);
        } catch (VirtualMachineError e) {
          throw e;
        } catch (Throwable t) {
          // The delete happened (the oracle has forgotten the object, and so has this partition):
          // the hook's failure is the application's to hear about, not the client's.
          LOG.warn("{}: objectDeleted failed on {} (the delete took effect): {}", self, cmd.target(), t.toString());
        } finally {
          running = null;
        }
      }
      return CoreReply.ok(null);
    }
    return v.status() == Msgs.RETRY ? CoreReply.retry(null) : CoreReply.notFound(cmd.target());
  }

  /**
   * The oracle refused a create or delete (its application's hook failed, or a partition could
   * not make the object; the verdict says which): the map is unchanged, so nothing changes here
   * either, and the object is released as after any verdict.
   */
  private static CoreReply refused(String reason) {
    return CoreReply.refused((reason != null ? reason : "refused by the oracle (see its log)") + "; nothing changed");
  }

  private Execution ssmrExecute(ExecutionContext ctx, SsmrReq s) {
    Command cmd = s.cmd();
    if (cmd.kind() == Command.Kind.CREATE) {
      return Execution.reply(create(cmd, verdict(ctx)));
    }
    if (cmd.kind() == Command.Kind.DELETE) {
      return Execution.reply(delete(cmd, verdict(ctx)));
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
        // sent to the partitions a (possibly stale) cache named, or by a client that does not
        // know a partition added since, must look again. A partition whose addition has not
        // finished (known, not open) holds nothing and clients cannot name it (review N3).
        if (!ctx.dests().containsAll(ctx.openPartitions())) {
          retries++;
          return Execution.reply(CoreReply.retry(null));
        }
        return Execution.reply(CoreReply.notFound(id));
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
  private String ship(ExecutionContext ctx, List<GroupId> to, TreeMap<ObjId, PRObject> values) {
    String why = null;
    try {
      Values v = Values.of(values);
      if (!values.isEmpty() && !to.isEmpty()) {
        codec.decode(codec.encode(v)); // what the receivers will read: fails here, where it can be told
      }
      for (GroupId g : to) {
        ctx.send(g, v);
      }
      return null;
    } catch (VirtualMachineError e) {
      throw e;
    } catch (Throwable e) {
      // Whatever failed, the receivers must hear it (they wait for these values), and so must the
      // sender's caller.
      why = "the objects " + values.keySet() + " cannot be shipped: " + e.getMessage();
    }
    for (GroupId g : to) {
      ctx.send(g, Values.failed(why.length() <= 1000 ? why : why.substring(0, 1000)));
    }
    return why;
  }

  /**
   * Runs an access command atomically: a copy of each of its local objects is taken first (their
   * encoding), and if the application throws, asks to retry with more objects, or leaves an
   * object that can no longer be encoded (it could never be moved, copied to another partition or
   * snapshotted), the copies are put back. So an error or RETRY reply means the command changed
   * nothing, at every replica alike (the hooks are deterministic). In an S-SMR command every
   * partition runs the command on the same values, so each reaches the same outcome and rolls
   * back its own objects. A {@link VirtualMachineError} depends on the replica and stops it.
   */
  private CoreReply execute(Command cmd, Map<ObjId, PRObject> combined) {
    ObjId[] mine = new ObjId[cmd.objects().size()];
    Object[] before = new Object[mine.length];
    int n = 0;
    for (ObjId id : cmd.objects()) {
      PRObject o = objects.get(id);
      if (o != null) {
        mine[n] = id;
        before[n++] = copy(o);
      }
    }
    view = combined;
    running = cmd;
    Object r;
    try {
      r = app.executeCommand(cmd);
    } catch (Throwable t) {
      if (!(t instanceof VirtualMachineError)) {
        rollBack(mine, before, n);
      }
      throw t;
    } finally {
      view = null;
      running = null;
    }
    if (r instanceof StateMachine.RetryMarker m) {
      rollBack(mine, before, n);
      executed++;
      retries++;
      return CoreReply.retry(m.extra());
    }
    String unencodable = app.checkObjectsAfterCommands() ? unencodable(cmd, combined) : null;
    if (unencodable != null) {
      rollBack(mine, before, n);
      throw new IllegalStateException(unencodable + "; the command changed nothing");
    }
    executed++;
    return CoreReply.ok(r);
  }

  /**
   * The copy of an object to put back if its command fails: the application's
   * ({@link StateMachine#copyForRollback}), or the object's encoding (every stored object
   * encodes: creates, moves and commands check it).
   */
  private Object copy(PRObject o) {
    PRObject c = app.copyForRollback(o);
    if (c == null) {
      return codec.encode(o);
    }
    if (c == o || !o.getId().equals(c.getId()) || c.getClass() != o.getClass()) {
      throw new IllegalStateException("copyForRollback returned " + (c == o ? "the object itself" : "another object")
          + " for " + o.getId());
    }
    return c;
  }

  /** Puts back the copies {@link #execute} took of a command's local objects. */
  private void rollBack(ObjId[] ids, Object[] copies, int n) {
    for (int i = 0; i < n; i++) {
      objects.put(ids[i], copies[i] instanceof byte[] b ? (PRObject) codec.decode(b) : (PRObject) copies[i]);
    }
  }

  /**
   * Null if every object the command saw can still be encoded, else which cannot. The whole view
   * is checked, not only the local objects, so that every partition of an S-SMR command decides
   * alike.
   */
  private String unencodable(Command cmd, Map<ObjId, PRObject> combined) {
    for (ObjId id : cmd.objects()) {
      PRObject o = combined != null ? combined.get(id) : objects.get(id);
      if (o != null) {
        int size;
        try {
          size = codec.encodedSize(o);
        } catch (IllegalArgumentException e) {
          return "the command left object " + id + " that cannot be encoded: " + e.getMessage();
        }
        if (size > MAX_OBJECT_BYTES) {
          return "the command left object " + id + " taking " + size + " bytes encoded, more than the "
              + MAX_OBJECT_BYTES + " an object may take";
        }
      }
    }
    return null;
  }

  private List<GroupId> otherPartitions(ExecutionContext ctx) {
    List<GroupId> out = new ArrayList<>();
    for (GroupId g : ctx.dests()) {
      if (!g.equals(self) && ctx.partitions().contains(g)) {
        out.add(g);
      }
    }
    return out;
  }

  /** Every how many multi-object single-partition commands one is sampled. */
  static final int SAMPLE_EVERY = 4;
  /** The most samples kept between two {@link Msgs.SamplesReq}s (older ones are dropped). */
  static final int MAX_SAMPLES = 4096;
  private final java.util.ArrayDeque<long[]> samples = new java.util.ArrayDeque<>();
  private long sampleTick;

  /**
   * Remembers the objects of some single-partition commands that touch several objects, for the
   * learned placement. Not replicated and never read by execution: each replica keeps its own,
   * and only the leader's are asked for, so it cannot make replicas diverge.
   */
  private void sample(Command cmd) {
    if (cmd.objects().size() < 2 || ++sampleTick % SAMPLE_EVERY != 0) {
      return;
    }
    synchronized (samples) {
      if (samples.size() == MAX_SAMPLES) {
        samples.pollFirst();
      }
      samples.addLast(cmd.objects().stream().mapToLong(ObjId::value).toArray());
    }
  }

  @Override
  public Object query(Object query) {
    if (query instanceof Msgs.ReadReq r) {
      return read(r.cmd());
    }
    if (query instanceof Msgs.SamplesReq) {
      synchronized (samples) {
        java.util.ArrayList<long[]> out = new java.util.ArrayList<>(samples);
        samples.clear();
        return new Msgs.Observed(out, SAMPLE_EVERY);
      }
    }
    if (query instanceof Msgs.StatsReq r) {
      long[] ids = null;
      if (r.withObjects()) {
        ids = objects.keySet().stream().mapToLong(ObjId::value).toArray();
      }
      return new Msgs.PartitionStatsReply(objects.size(), executed, multiPartition, retries, ids);
    }
    throw new IllegalArgumentException("a partition answers no " + (query == null ? null : query.getClass().getSimpleName()));
  }

  /**
   * Serves a read ({@link Client#sendRead}) at this replica, off the log: Ratis has applied
   * everything committed before the query arrived (a linearizable read), and the query runs under
   * the group's lock, between two applied entries. Executing the command now is what delivering
   * it now would do, except that it overtakes the commands in progress or blocked here; so it is
   * served only if none of them holds or waits for one of its objects (docs/design.md 4.8, 6).
   * Changes nothing here: not the objects (the application's contract for a read), not the
   * counters, which are replicated.
   */
  private CoreReply read(Command cmd) {
    if (cmd == null || cmd.kind() != Command.Kind.ACCESS) {
      return CoreReply.busy("only an access command can be read");
    }
    if (mustWait(null, cmd.objects())) {
      return CoreReply.busy("an object is in use by a command in progress");
    }
    for (ObjId id : cmd.objects()) {
      if (!objects.containsKey(id)) {
        return CoreReply.retry(null);
      }
    }
    running = cmd;
    try {
      Object r = app.executeCommand(cmd);
      return r instanceof StateMachine.RetryMarker m ? CoreReply.retry(m.extra()) : CoreReply.ok(r);
    } catch (VirtualMachineError e) {
      throw e; // depends on this replica, not on the command: as when executing from the log
    } catch (Throwable t) {
      // Through the log the same command gets the same failure, reported as the log reports it.
      return CoreReply.busy("the application failed: " + t);
    } finally {
      running = null;
    }
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
    out.writeVarInt(held.size(), true);
    for (ObjId id : held) {
      out.writeVarLong(id.value(), false);
    }
    out.writeVarInt(retired.size(), true);
    for (GroupId g : retired) {
      out.writeString(g.name());
    }
    out.writeVarInt(tableChanges.size(), true);
    for (MsgId t : tableChanges) {
      out.writeVarLong(t.client(), false);
      out.writeVarLong(t.seq(), false);
      out.writeVarInt(t.attempt(), true);
    }
    out.writeVarInt(creating.size(), true);
    for (PRObject o : creating.values()) {
      codec.write(out, o);
    }
    out.writeVarInt(waiting.size(), true);
    for (Map.Entry<MsgId, ObjId[]> e : waiting.entrySet()) {
      out.writeVarLong(e.getKey().client(), false);
      out.writeVarLong(e.getKey().seq(), false);
      out.writeVarInt(e.getKey().attempt(), true);
      out.writeVarInt(e.getValue().length, true);
      for (ObjId id : e.getValue()) {
        out.writeVarLong(id.value(), false);
      }
    }
    return out.toBytes();
  }

  @Override
  public void restore(byte[] state) {
    objects.clear();
    held.clear();
    waiting.clear();
    creating.clear();
    retired.clear();
    tableChanges.clear();
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
    int h = in.readVarInt(true);
    for (int i = 0; i < h; i++) {
      held.add(ObjId.valueOf(in.readVarLong(false)));
    }
    int rt = in.readVarInt(true);
    for (int i = 0; i < rt; i++) {
      retired.add(GroupId.valueOf(in.readString()));
    }
    int tc = in.readVarInt(true);
    for (int i = 0; i < tc; i++) {
      tableChanges.add(MsgId.valueOf(in.readVarLong(false), in.readVarLong(false), in.readVarInt(true)));
    }
    int k = in.readVarInt(true);
    for (int i = 0; i < k; i++) {
      PRObject o = (PRObject) codec.read(in);
      creating.put(o.getId(), o);
    }
    int w = in.readVarInt(true);
    for (int i = 0; i < w; i++) {
      MsgId id = MsgId.valueOf(in.readVarLong(false), in.readVarLong(false), in.readVarInt(true));
      ObjId[] ids = new ObjId[in.readVarInt(true)];
      for (int j = 0; j < ids.length; j++) {
        ids[j] = ObjId.valueOf(in.readVarLong(false));
      }
      waiting.put(id, ids);
    }
  }
}
