package io.eyrie.core;

import io.eyrie.multicast.GroupId;
import java.util.Collection;

/**
 * The application's side of a partition: the hooks a service implements. A service extends this
 * class and implements {@link #executeCommand} and {@link #createObject} as if every object were
 * local; Eyrie's server proxy (the paper's Algorithm 3 and S-SMR's Algorithm 1, package-private
 * in this package) runs it: it checks locality, moves objects in and out, and, for commands
 * executed with S-SMR, gathers copies of remote objects so that the code sees them too. One
 * instance serves one partition replica.
 *
 * <p>Like every replicated state machine, the code must be deterministic: no clock, no
 * randomness, no iteration over hash-ordered collections that could differ between replicas.
 * The partition's replicated state is its objects: they are what moves and what snapshots hold,
 * so keep no other state in fields of the subclass.
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
public abstract class StateMachine {
  private PartitionServer server;

  /** Creates the state machine of one partition replica, with no objects. */
  protected StateMachine() {}

  /**
   * Executes an access command. Every object of {@link Command#objects()} is available through
   * {@link #getObject}; changes made to them are the command's writes. The command is atomic: if
   * it throws, returns {@link #retry(Collection)}, or leaves an object that cannot be encoded (or
   * takes more than about 3 MiB encoded: such an object could never move),
   * every write it made is undone (Eyrie encodes the command's objects before it runs and puts
   * the copies back), and the client is told it did not take effect.
   *
   * @param command the command
   * @return the reply for the client (a registered object or null), or {@link #retry(Collection)}
   */
  protected abstract Object executeCommand(Command command);

  /**
   * Creates the object of a create command. Called when the create starts at the partition,
   * before the oracle decides: if it throws, returns null, an object with another id, or one that
   * cannot be encoded, the create is refused (the client gets {@code REFUSED}) and nothing is
   * created anywhere. Must be deterministic: an S-SMR create calls it at every partition it
   * reaches. The object is kept only if the oracle then finds the id free. The hook sees no
   * object ({@link #getObject} answers null) and must have no effect beyond the object it returns:
   * it runs also for creates that end refused or find the id taken.
   *
   * @param command the create command; {@link Command#target()} is the new object's id
   * @return the new object, with that id
   */
  protected abstract PRObject createObject(Command command);

  /**
   * Called when a delete removes one of this partition's objects, after the oracle forgot it:
   * the application may release what it keeps about the object (the default does nothing). It
   * cannot refuse the delete: if it throws, the failure is logged and the delete is answered OK.
   * Must be deterministic, like every hook.
   *
   * @param object the removed object
   * @param delete the delete command (its {@link Command#op()} is the client's argument, if any)
   */
  protected void objectDeleted(PRObject object, Command delete) {}

  /**
   * Returns what other partitions get of a local object for an S-SMR command that spans them:
   * they execute the command on this copy (their writes to it vanish; this partition applies its
   * own). The default is the object itself. An application may return a lighter copy, with the
   * same id and class registered with the codec, that leaves out what no command spanning
   * partitions reads of another partition's object (Chirper leaves out timelines): every
   * partition must still compute the same writes to its own objects and the same reply. Called
   * when the command starts here; must be deterministic and must not change the object. The
   * copy must encode whenever the object does (every partition checks the values it computed on
   * for encodability after the command, and all must decide alike).
   *
   * @param object a local object the command declares
   * @param command the S-SMR command
   * @return the copy to send (encoded at once)
   */
  protected PRObject copyForPartitions(PRObject object, Command command) {
    return object;
  }

  /**
   * Returns a copy of a local object taken before a command runs, which Eyrie puts back if the
   * command fails (it throws, asks to retry, or leaves an object that cannot be encoded), or null
   * for Eyrie's copy, the object's encoding (the default). Override it when a cheaper copy is at
   * hand: an object with the same id and class whose state later writes to the original cannot
   * change, for example new collections holding the same immutable elements, or the same
   * collections with both objects copying each before they first write it (Chirper's {@code User}).
   * Called for every local object of every command that runs through the log; must be
   * deterministic and must not change the object's encoded state (bookkeeping that is not encoded,
   * such as which collections are shared, may change).
   *
   * @param object a local object the command declares
   * @return the copy, or null for Eyrie's
   */
  protected PRObject copyForRollback(PRObject object) {
    return null;
  }

  /**
   * Whether Eyrie checks after every command that the command's objects can still be encoded
   * and fit in one channel item, and puts them back if not (the command then fails and changed
   * nothing). True by default. The check encodes every object a command touches: for large
   * objects (a Chirper user with its timeline) that is most of a write's CPU. Override it to
   * return false when the objects' fields can only hold registered types and their size is
   * bounded; an object that could no longer be encoded would then be found only when it must
   * travel (its move or S-SMR command fails with an error and it stays where it is) or be
   * snapshotted (its partition's snapshots fail, and its log is kept, until a command repairs it).
   *
   * @return true to check
   */
  protected boolean checkObjectsAfterCommands() {
    return true;
  }

  /**
   * Returns an object of the command being executed, or null if it does not exist.
   *
   * @param id the object's id
   * @return the object
   */
  protected final PRObject getObject(ObjId id) {
    return server.object(id);
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

  record RetryMarker(ObjId[] extra) {}

  /** Returns this replica's partition. */
  protected final GroupId partition() {
    return server.partition();
  }

  /** Called once by the partition server that runs this state machine. */
  final void attach(PartitionServer s) {
    if (server != null) {
      throw new IllegalStateException("a StateMachine serves one partition replica; create a new one for each");
    }
    server = s;
  }
}
