package io.eyrie.oracle;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.protocol.Begun;
import io.eyrie.core.protocol.CreateReq;
import io.eyrie.core.protocol.DeleteReq;
import io.eyrie.core.protocol.SsmrReq;
import io.eyrie.core.protocol.Verdict;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.GroupId;
import java.util.List;

/**
 * The oracle's decisions on creates, deletes and S-SMR creates and deletes, made once every
 * partition destination has begun the command: the verdict, the change to the map and the
 * application's hook that go with it, and the verdict sent to the partitions. Runs from the log
 * only, so every replica decides the same.
 */
record Verdicts(OracleStateMachine app, LocationMap map, PartitionTableState table) {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Verdicts.class);

  /** The command of a create, delete or S-SMR request. */
  static Command commandOf(Object p) {
    return p instanceof CreateReq c ? c.cmd() : p instanceof DeleteReq d ? d.cmd() : ((SsmrReq) p).cmd();
  }

  /** The first refusal in the Begun items the given partitions sent for this command, or null. */
  static String refusal(ExecutionContext ctx, List<GroupId> from) {
    for (GroupId g : from) {
      for (Object item : ctx.received(g)) {
        if (item instanceof Begun b && b.refusal() != null) {
          return b.refusal();
        }
      }
    }
    return null;
  }

  /**
   * Refuses a command that a partition ended without executing it (a reused message id): the
   * partitions that did not abandon it get a REFUSED verdict; the map does not change.
   */
  void refuseAbandoned(ExecutionContext ctx, List<GroupId> partitions) {
    Verdict v = new Verdict(Verdict.Status.REFUSED, null, "its message id was reused with other content; "
        + ctx.abandonedBy() + " did not execute it");
    for (GroupId g : partitions) {
      if (!ctx.abandonedBy().contains(g)) {
        ctx.send(g, v);
      }
    }
  }

  /**
   * Decides a create or delete on the map, applies it and sends the verdict to every partition
   * destination ({@code partitions}). If an application hook ({@code created}, {@code deleted},
   * the placement) throws, the map is put back as it was and the verdict is REFUSED: the
   * partitions release the object and answer the client REFUSED, and the object's chain goes on
   * as after any verdict. The exception depends only on the log (the hooks are deterministic), so
   * every replica does the same; a {@link VirtualMachineError} depends on the replica and is
   * rethrown (it stops it).
   */
  void decide(ExecutionContext ctx, Object p, List<GroupId> partitions) {
    ObjId id = commandOf(p).target();
    GroupId before = map.get(id);
    Verdict v;
    try {
      String cannot = refusal(ctx, partitions);
      boolean creates = p instanceof CreateReq || ((p instanceof SsmrReq s) && s.cmd().kind() == Command.Kind.CREATE);
      if (creates && cannot != null && !map.contains(id)) {
        // A partition could not make the object: the map never names it.
        v = new Verdict(Verdict.Status.REFUSED, null, cannot);
      } else {
        v = verdict(ctx, p);
      }
    } catch (VirtualMachineError e) {
      throw e;
    } catch (Throwable e) {
      map.putBack(id, before);
      LOG.warn("{}: the oracle's application failed on {} of {}; refused: {}", ctx.group(), ctx.id(), id, e.toString());
      String why = "the oracle's application failed: " + e;
      v = new Verdict(Verdict.Status.REFUSED, null, why.length() <= Verdict.REASON_MAX ? why : why.substring(0, Verdict.REASON_MAX));
    }
    for (GroupId g : partitions) {
      ctx.send(g, v);
    }
  }

  /** The verdict on a create or delete, with the map and the application's hooks changed by it. */
  private Verdict verdict(ExecutionContext ctx, Object p) {
    if (p instanceof CreateReq c) {
      ObjId id = c.cmd().target();
      // A partition retired since the consult that chose it takes nothing new: the client asks again.
      Verdict.Status status = map.contains(id) ? Verdict.Status.NOK
          : table.isActive(c.partition()) ? Verdict.Status.OK : Verdict.Status.RETRY;
      if (status == Verdict.Status.OK) {
        map.place(id, c.partition());
        app.created(c.cmd(), c.partition());
      }
      return new Verdict(status, status == Verdict.Status.RETRY ? null : c.partition());
    } else if (p instanceof DeleteReq d) {
      ObjId id = d.cmd().target();
      GroupId at = map.get(id);
      Verdict.Status status;
      if (at == null) {
        status = Verdict.Status.NOK;
      } else if (at.equals(d.partition())) {
        map.place(id, null);
        app.deleted(id);
        status = Verdict.Status.OK;
      } else {
        status = Verdict.Status.RETRY;
      }
      return new Verdict(status, at);
    } else {
      return ssmrVerdict(ctx, ((SsmrReq) p).cmd());
    }
  }

  /** The verdict on an S-SMR create or delete, sent to every partition the client knew. */
  private Verdict ssmrVerdict(ExecutionContext ctx, Command cmd) {
    GroupId at = map.get(cmd.target());
    if (cmd.kind() == Command.Kind.CREATE) {
      if (at != null) {
        return new Verdict(Verdict.Status.NOK, at);
      }
      at = table.placement(app.getObjectPlacement(cmd), map.load());
      if (!ctx.dests().contains(at)) {
        // The client's view of the cluster missed a partition (one added since): it must
        // learn it and send again; only a command to every partition may place anywhere.
        return new Verdict(Verdict.Status.RETRY, null);
      }
      map.place(cmd.target(), at);
      app.created(cmd, at);
      return new Verdict(Verdict.Status.OK, at);
    } else if (at != null && !ctx.dests().contains(at)) {
      return new Verdict(Verdict.Status.RETRY, null);
    }
    if (at != null) {
      map.place(cmd.target(), null);
      app.deleted(cmd.target());
    }
    return new Verdict(at != null ? Verdict.Status.OK : Verdict.Status.NOK, at);
  }
}
