package io.eyrie.core;

import java.util.Collection;
import java.util.Collections;
import java.util.Objects;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * An application command as the client proxy sends it: its kind (create, access or delete), the
 * application's operation, and the objects it touches. Immutable.
 *
 * <p>The object set is what the client proxy co-locates before sending the command, and what the
 * server checks for locality; an operation must touch no object outside it (the server may
 * answer {@code retry(γ)} to ask for more, see {@link StateMachine#retry}).
 */
public final class Command {

  /** The kind of a command. */
  public enum Kind {
    /** Creates one object. */
    CREATE,
    /** Reads and writes existing objects. */
    ACCESS,
    /** Deletes one object. */
    DELETE
  }

  private Kind kind;
  private Object op;
  private TreeSet<ObjId> objects;

  private Command() {}

  private Command(Kind kind, Object op, Collection<ObjId> objects) {
    this.kind = Objects.requireNonNull(kind, "kind");
    this.op = op;
    this.objects = new TreeSet<>(objects);
    if (this.objects.isEmpty()) {
      throw new IllegalArgumentException("a command touches at least one object");
    }
  }

  /**
   * Returns a command that creates an object.
   *
   * @param id the new object's id
   * @param op the application's description of the object to create (passed to
   *     {@link StateMachine#createObject})
   * @return the command
   */
  public static Command create(ObjId id, Object op) {
    return new Command(Kind.CREATE, op, Collections.singleton(id));
  }

  /**
   * Returns a command that accesses existing objects.
   *
   * @param op the application's operation (passed to {@link StateMachine#executeCommand})
   * @param objects the objects it reads or writes
   * @return the command
   */
  public static Command access(Object op, Collection<ObjId> objects) {
    return new Command(Kind.ACCESS, op, objects);
  }

  /**
   * Returns a command that accesses existing objects.
   *
   * @param op the application's operation
   * @param objects the objects it reads or writes
   * @return the command
   */
  public static Command access(Object op, ObjId... objects) {
    return access(op, java.util.Arrays.asList(objects));
  }

  /**
   * Returns a command that deletes an object.
   *
   * @param id the object's id
   * @param op an optional application value, or null
   * @return the command
   */
  public static Command delete(ObjId id, Object op) {
    return new Command(Kind.DELETE, op, Collections.singleton(id));
  }

  /** Returns a copy of this command that also touches the given objects. */
  public Command withObjects(Collection<ObjId> more) {
    TreeSet<ObjId> all = new TreeSet<>(objects);
    all.addAll(more);
    return new Command(kind, op, all);
  }

  /** Returns the kind. */
  public Kind kind() {
    return kind;
  }

  /** Returns the application's operation. */
  public Object op() {
    return op;
  }

  /** Returns the objects the command touches, ascending. */
  public SortedSet<ObjId> objects() {
    return Collections.unmodifiableSortedSet(objects);
  }

  /** Returns the single object of a create or delete command. */
  public ObjId target() {
    return objects.first();
  }

  @Override
  public String toString() {
    return kind.name().toLowerCase() + objects + (op == null ? "" : " " + op);
  }
}
