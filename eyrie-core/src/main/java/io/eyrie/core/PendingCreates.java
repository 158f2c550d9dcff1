package io.eyrie.core;

import io.eyrie.core.internal.ObjectEncoding;
import io.eyrie.core.internal.ObjectStore;
import io.eyrie.core.protocol.Begun;
import io.eyrie.core.protocol.CoreReply;
import io.eyrie.core.protocol.Verdict;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.GroupId;
import java.util.Collection;
import java.util.Collections;
import java.util.TreeMap;

/**
 * Owns a partition's creates and deletes against the oracle's verdict. When one starts here the
 * partition tells the oracle (execution atomicity: the oracle changes its map only after), and a
 * create first makes its object, so that one the application cannot make is refused before the
 * oracle's map names it. The objects made wait here for the verdict, which installs or drops
 * them; the verdict on a delete removes the object. Replicated: the objects made are in the
 * snapshot. The command's objects are held meanwhile, so there is at most one per id.
 */
final class PendingCreates {
  /** Logs under the partition server's name, which operators know the partition's protocol by. */
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(PartitionServer.class);
  private final GroupId self;
  private final GroupId oracle;
  private final ObjectStore store;
  private final CommandRunner runner;
  private final ObjectEncoding encoding;
  /** The objects made for the creates that wait here for the oracle's verdict. */
  private final TreeMap<ObjId, PRObject> creating = new TreeMap<>();

  PendingCreates(GroupId self, GroupId oracle, ObjectStore store, CommandRunner runner, ObjectEncoding encoding) {
    this.self = self;
    this.oracle = oracle;
    this.store = store;
    this.runner = runner;
    this.encoding = encoding;
  }

  /**
   * Tells the oracle that a create or delete has started here, with why this partition cannot
   * create the object if it makes it and cannot.
   *
   * @param ctx the command's context
   * @param cmd the create or delete
   * @param makes whether this partition makes the object of the create
   */
  void begin(ExecutionContext ctx, Command cmd, boolean makes) {
    String refusal = makes ? prepare(cmd) : null;
    ctx.send(oracle, refusal == null ? new Begun(self) : Begun.refused(self, refusal));
  }

  /**
   * Makes the object of a create when the create starts here, before the oracle decides, and
   * keeps it aside: the application's {@code createObject} may throw, return no object, one with
   * another id, or one that cannot be encoded (it could never be moved, copied or snapshotted).
   * Any of these is reported in {@link Begun}, so the oracle refuses the create and its map never
   * names an object that no partition holds.
   *
   * @return null, or why the object cannot be created
   */
  private String prepare(Command cmd) {
    PRObject o;
    try {
      o = runner.make(cmd);
    } catch (VirtualMachineError e) {
      throw e; // depends on this replica, not on the command
    } catch (Throwable t) {
      return "createObject failed at " + self + ": " + t;
    }
    if (o == null || !cmd.target().equals(o.getId())) {
      return "createObject returned " + (o == null ? "null" : "an object with id " + o.getId())
          + " for object " + cmd.target();
    }
    String bad = encoding.unstorable(o);
    if (bad != null) {
      return bad;
    }
    creating.put(cmd.target(), o);
    return null;
  }

  /** Applies the oracle's verdict on a create: installs the object made if it places it here. */
  CoreReply create(ExecutionContext ctx, Command cmd) {
    Verdict v = verdict(ctx);
    PRObject made = creating.remove(cmd.target());
    return switch (v.status()) {
      case REFUSED -> refused(v.reason());
      case RETRY -> CoreReply.retry(null);
      case NOK -> CoreReply.exists(cmd.target());
      case OK -> placed(v, made, cmd);
    };
  }

  /** Installs the object made for a create that the oracle placed, if it placed it here. */
  private CoreReply placed(Verdict v, PRObject made, Command cmd) {
    if (!self.equals(v.location())) {
      return CoreReply.ok(null);
    }
    if (made == null) {
      // Every create that starts here makes its object first, and the oracle places an object
      // only where one was made; nothing else can reach this line.
      LOG.error("{}: the oracle placed {} here, but no object was made when the create started", self, cmd.target());
      return CoreReply.refused("internal error: no object was made for " + cmd.target());
    }
    store.put(made.getId(), made);
    store.countExecuted();
    return CoreReply.ok(null);
  }

  /**
   * Applies the oracle's verdict on a delete: OK removes the object wherever it is here (then
   * tells the application, which may clean up but cannot refuse: the oracle has forgotten it).
   */
  CoreReply delete(ExecutionContext ctx, Command cmd) {
    Verdict v = verdict(ctx);
    return switch (v.status()) {
      case REFUSED -> refused(v.reason());
      case RETRY -> CoreReply.retry(null);
      case NOK -> CoreReply.notFound(cmd.target());
      case OK -> removed(cmd);
    };
  }

  /** Removes the object the oracle has forgotten, if it is here, and tells the application. */
  private CoreReply removed(Command cmd) {
    PRObject gone = store.remove(cmd.target());
    if (gone != null) {
      try {
        runner.deleted(gone, cmd);
      } catch (VirtualMachineError e) {
        throw e;
      } catch (Throwable t) {
        // The delete happened (the oracle has forgotten the object, and so has this partition):
        // the hook's failure is the application's to hear about, not the client's.
        LOG.warn("{}: objectDeleted failed on {} (the delete took effect): {}", self, cmd.target(), t.toString());
      }
    }
    return CoreReply.ok(null);
  }

  /**
   * The oracle's verdict on a create or delete; REFUSED if a destination abandoned the command
   * (a reused message id: the oracle refuses it too), so that the object made for a create is
   * dropped and nothing changes, as after any refusal.
   */
  private Verdict verdict(ExecutionContext ctx) {
    if (!ctx.abandonedBy().isEmpty()) {
      return new Verdict(Verdict.Status.REFUSED, null, "its message id was reused with other content; " + ctx.abandonedBy()
          + " did not execute it");
    }
    return (Verdict) ctx.received(oracle).get(0);
  }

  /**
   * The oracle refused a create or delete (its application's hook failed, or a partition could
   * not make the object; the verdict says which): the map is unchanged, so nothing changes here
   * either, and the object is released as after any verdict.
   */
  private static CoreReply refused(String reason) {
    return CoreReply.refused((reason != null ? reason : "refused by the oracle (see its log)") + "; nothing changed");
  }

  /** Returns the objects made for creates that wait for their verdict, in the order of their ids. */
  Collection<PRObject> made() {
    return Collections.unmodifiableCollection(creating.values());
  }

  /** Keeps an object made for a create, read from a snapshot. */
  void restoreMade(PRObject o) {
    creating.put(o.getId(), o);
  }

  /** Forgets every object made. */
  void clear() {
    creating.clear();
  }
}
