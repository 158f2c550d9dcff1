package io.eyrie.core;

import io.eyrie.core.internal.ObjectEncoding;
import io.eyrie.core.internal.ObjectStore;
import io.eyrie.core.protocol.CoreReply;
import io.eyrie.multicast.Codec;
import java.util.Map;

/**
 * Owns the calls into the application's hooks that see objects, and what they see:
 * {@link StateMachine#getObject} answers only the running command's declared objects (from its
 * combined view during S-SMR), and a create's hook sees none. Access commands run here
 * atomically: a copy of each local object is taken before the command runs and put back if it
 * fails. Reads off the log run here too, and change nothing.
 */
final class CommandRunner {
  private final StateMachine app;
  private final ObjectStore store;
  private final ObjectEncoding encoding;
  private final Codec codec;
  /** The S-SMR command's combined view while it runs, else null. */
  private Map<ObjId, PRObject> view;
  /** The command being executed on local objects only: getObject returns its objects alone. */
  private Command running;

  CommandRunner(StateMachine app, ObjectStore store, ObjectEncoding encoding, Codec codec) {
    this.app = app;
    this.store = store;
    this.encoding = encoding;
    this.codec = codec;
  }

  /** The object the running command sees: from its combined view during S-SMR, else local. */
  PRObject object(ObjId id) {
    if (view != null) {
      return view.get(id);
    }
    // Only the command's declared objects: another may be held by an S-SMR access in progress,
    // which is ordered before this command.
    return running == null || running.objects().contains(id) ? store.get(id) : null;
  }

  /**
   * Runs an access command atomically: a copy of each of its local objects is taken first (their
   * encoding), and if the application throws, asks to retry with more objects, or leaves an
   * object that can no longer be encoded (it could never be moved, copied to another partition or
   * snapshotted), the copies are put back. So an error or RETRY reply means the command changed
   * nothing, at every replica alike (the hooks are deterministic). In an S-SMR command every
   * partition runs the command on the same values, so each reaches the same outcome and rolls
   * back its own objects. A {@link VirtualMachineError} depends on the replica and stops it.
   *
   * @param cmd the command
   * @param combined the S-SMR command's view (local objects and the others' copies), or null
   * @return the reply
   */
  CoreReply execute(Command cmd, Map<ObjId, PRObject> combined) {
    ObjId[] mine = new ObjId[cmd.objects().size()];
    Object[] before = new Object[mine.length];
    int n = 0;
    for (ObjId id : cmd.objects()) {
      PRObject o = store.get(id);
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
      store.countExecuted();
      store.countRetry();
      return CoreReply.retry(m.extra());
    }
    String unencodable = app.checkObjectsAfterCommands() ? unencodable(cmd, combined) : null;
    if (unencodable != null) {
      rollBack(mine, before, n);
      throw new IllegalStateException(unencodable + "; the command changed nothing");
    }
    store.countExecuted();
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
      store.put(ids[i], copies[i] instanceof byte[] b ? (PRObject) codec.decode(b) : (PRObject) copies[i]);
    }
  }

  /**
   * Null if every object the command saw can still be encoded, else which cannot. The whole view
   * is checked, not only the local objects, so that every partition of an S-SMR command decides
   * alike.
   */
  private String unencodable(Command cmd, Map<ObjId, PRObject> combined) {
    for (ObjId id : cmd.objects()) {
      PRObject o = combined != null ? combined.get(id) : store.get(id);
      if (o != null) {
        String bad = encoding.leftUnencodable(id, o);
        if (bad != null) {
          return bad;
        }
      }
    }
    return null;
  }

  /**
   * Runs a read off the log that nothing here holds back (the caller checked): RETRY if an object
   * is not here, else the application's answer. Changes nothing here: not the objects (the
   * application's contract for a read), not the counters, which are replicated.
   */
  CoreReply read(Command cmd) {
    for (ObjId id : cmd.objects()) {
      if (!store.contains(id)) {
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

  /**
   * Calls the application's {@code createObject}, which sees no object: it runs before the oracle
   * decides, so an object of the same id that lives here must not be changed by a create that
   * will be refused. What the hook throws reaches the caller.
   */
  PRObject make(Command cmd) {
    running = cmd;
    view = Map.of();
    try {
      return app.createObject(cmd);
    } finally {
      running = null;
      view = null;
    }
  }

  /** Calls the application's {@code objectDeleted}; what the hook throws reaches the caller. */
  void deleted(PRObject gone, Command cmd) {
    running = cmd;
    try {
      app.objectDeleted(gone, cmd);
    } finally {
      running = null;
    }
  }
}
