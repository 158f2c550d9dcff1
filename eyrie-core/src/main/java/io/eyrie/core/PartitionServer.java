package io.eyrie.core;

import io.eyrie.core.internal.AccessSampler;
import io.eyrie.core.internal.Moves;
import io.eyrie.core.internal.ObjectEncoding;
import io.eyrie.core.internal.ObjectLocks;
import io.eyrie.core.internal.ObjectStore;
import io.eyrie.core.internal.TableChanges;
import io.eyrie.core.protocol.AccessReq;
import io.eyrie.core.protocol.Begun;
import io.eyrie.core.protocol.CoreReply;
import io.eyrie.core.protocol.CreateReq;
import io.eyrie.core.protocol.DeleteReq;
import io.eyrie.core.protocol.MoveReq;
import io.eyrie.core.protocol.PartitionChange;
import io.eyrie.core.protocol.ReadReq;
import io.eyrie.core.protocol.SamplesReq;
import io.eyrie.core.protocol.SsmrReq;
import io.eyrie.core.protocol.StatsReq;
import io.eyrie.core.protocol.Validation;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Deliverer;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.GroupId;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * The server proxy of one partition replica: the paper's Algorithm 3 (DS-SMR) and S-SMR's
 * Algorithm 1 around an application's {@link StateMachine}. It owns the dispatch: it checks each
 * delivered message, orders it among the commands on its objects, checks locality, and hands it
 * to the part that carries it out: {@link CommandRunner} (atomic commands and reads),
 * {@link PendingCreates} (creates and deletes against the oracle's verdict), {@link Moves},
 * {@link SsmrExchange}, and {@link TableChanges} (the oracle's table). {@link ObjectStore} holds
 * the objects, {@link ObjectLocks} the holds and waits, {@link AccessSampler} the samples for the
 * learned placement, and {@link PartitionSnapshot} encodes the whole. The application's class
 * only sees its hooks, so it cannot change the protocol.
 */
final class PartitionServer implements Deliverer {
  private final StateMachine app;
  private final GroupId self;
  private final ClusterConfig cluster;
  private final ObjectStore store = new ObjectStore();
  private final ObjectLocks locks = new ObjectLocks();
  private final TableChanges tables = new TableChanges();
  private final AccessSampler sampler = new AccessSampler();
  private final CommandRunner runner;
  private final PendingCreates creates;
  private final Moves moves;
  private final SsmrExchange ssmr;
  private final PartitionSnapshot snapshots;

  PartitionServer(StateMachine app, GroupId self, ClusterConfig cluster, Codec codec) {
    this.app = app;
    this.self = self;
    this.cluster = cluster;
    ObjectEncoding encoding = new ObjectEncoding(codec);
    this.runner = new CommandRunner(app, store, encoding, codec);
    this.creates = new PendingCreates(self, cluster.oracle(), store, runner, encoding);
    this.moves = new Moves(self, cluster.oracle(), store, tables, locks, encoding);
    this.ssmr = new SsmrExchange(self, app, store, locks, runner, encoding);
    this.snapshots = new PartitionSnapshot(codec, store, locks, tables, creates);
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
    return runner.object(id);
  }

  Set<ObjId> localIds() {
    return store.ids();
  }

  @Override
  public Execution deliver(ExecutionContext ctx) {
    Object p = ctx.payload();
    String invalid = Validation.check(p, ctx.dests(), cluster.oracle(), ctx.partitions());
    if (invalid != null) {
      locks.unblock(ctx.id()); // (validation never refuses what it once let through; in case)
      if (p instanceof MoveReq m && self.equals(m.dst()) && ctx.dests().contains(cluster.oracle())) {
        // The oracle waits for the destination's word on a move: give it, or its chain waits for ever.
        ctx.send(cluster.oracle(), Begun.refused(self, invalid));
      }
      return Execution.error(invalid);
    }
    if (p instanceof PartitionChange) {
      // The oracle decides the change and sends the table it leaves; until then moves out of
      // here wait, so that none ships into a partition just retired.
      tables.delivered(ctx.id());
      return Execution.resumeLater(List.of(cluster.oracle()));
    }
    ObjId[] touched = objectsOf(p);
    // A move out of here waits for the tables of the changes before it; it claims its objects
    // meanwhile, as any blocked command does, so that later commands on them keep their order.
    boolean waitsForTable = tables.waiting() && p instanceof MoveReq m && self.equals(m.src());
    if (waitsForTable || locks.mustWait(ctx.id(), Arrays.asList(touched))) {
      locks.block(ctx.id(), touched);
      return Execution.blocked();
    }
    locks.unblock(ctx.id());
    if (p instanceof AccessReq a) {
      for (ObjId id : a.cmd().objects()) {
        if (!store.contains(id)) {
          store.countRetry();
          return Execution.reply(CoreReply.retry(null));
        }
      }
      sampler.sample(a.cmd());
      return Execution.reply(runner.execute(a.cmd(), null));
    } else if (p instanceof MoveReq m) {
      return moves.start(ctx, m, touched);
    } else if (p instanceof CreateReq || p instanceof DeleteReq) {
      // Execution atomicity: the oracle changes its map (which consults read) and sends its
      // verdict only after this partition has reached the command here, so nothing ordered
      // before it here can observe the change, and nothing after it can miss it. A create is
      // made now, so that one the application cannot make is refused before the map names it.
      Command cmd = p instanceof CreateReq c ? c.cmd() : ((DeleteReq) p).cmd();
      creates.begin(ctx, cmd, p instanceof CreateReq made && self.equals(made.partition()));
      return locks.waitHolding(ctx, self, touched, List.of(cluster.oracle()));
    } else if (p instanceof SsmrReq s) {
      if (s.cmd().kind() == Command.Kind.ACCESS) {
        return ssmr.start(ctx, s, touched);
      }
      // Any destination may be where the oracle places a new object: each makes it (the hook
      // is deterministic, so each gets the same outcome).
      creates.begin(ctx, s.cmd(), s.cmd().kind() == Command.Kind.CREATE);
      return locks.waitHolding(ctx, self, touched, List.of(cluster.oracle()));
    }
    return Execution.error("a partition cannot execute " + (p == null ? null : p.getClass().getSimpleName()));
  }

  @Override
  public Execution resume(ExecutionContext ctx) {
    Object p = ctx.payload();
    locks.release(objectsOf(p));
    if (p instanceof PartitionChange) {
      // Whatever the oracle did, the change no longer holds moves back; a change the oracle
      // abandoned (a reused message id) changed no table.
      tables.ended(ctx.id());
      if (ctx.abandonedBy().isEmpty()) {
        tables.setRetired(((PartitionTable) ctx.received(cluster.oracle()).get(0)).retired());
      }
      return Execution.done();
    }
    if (p instanceof MoveReq m) {
      return moves.arrived(ctx, m);
    } else if (p instanceof CreateReq c) {
      return Execution.reply(creates.create(ctx, c.cmd()));
    } else if (p instanceof DeleteReq d) {
      return Execution.reply(creates.delete(ctx, d.cmd()));
    } else if (p instanceof SsmrReq s) {
      if (s.cmd().kind() == Command.Kind.CREATE) {
        return Execution.reply(creates.create(ctx, s.cmd()));
      } else if (s.cmd().kind() == Command.Kind.DELETE) {
        return Execution.reply(creates.delete(ctx, s.cmd()));
      }
      return ssmr.execute(ctx, s.cmd());
    }
    return Execution.error("nothing to resume for " + (p == null ? null : p.getClass().getSimpleName()));
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

  @Override
  public Object query(Object query) {
    if (query instanceof ReadReq r) {
      return read(r.cmd());
    }
    if (query instanceof SamplesReq) {
      return sampler.drain();
    }
    if (query instanceof StatsReq r) {
      return store.stats(r.withObjects());
    }
    throw new IllegalArgumentException("a partition answers no " + (query == null ? null : query.getClass().getSimpleName()));
  }

  /**
   * Serves a read ({@link Client#sendRead}) at this replica, off the log: Ratis has applied
   * everything committed before the query arrived (a linearizable read), and the query runs under
   * the group's lock, between two applied entries. Executing the command now is what delivering
   * it now would do, except that it overtakes the commands in progress or blocked here; so it is
   * served only if none of them holds or waits for one of its objects (docs/design.md 4.8, 6).
   */
  private CoreReply read(Command cmd) {
    if (cmd == null || cmd.kind() != Command.Kind.ACCESS) {
      return CoreReply.busy("only an access command can be read");
    }
    if (locks.mustWait(null, cmd.objects())) {
      return CoreReply.busy("an object is in use by a command in progress");
    }
    return runner.read(cmd);
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
