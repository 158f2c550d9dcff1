package io.eyrie.core;

import java.util.Objects;

/**
 * The outcome of a command that reached a decision: its {@link #status()}, the application's
 * value when it was executed, and otherwise which object was missing or existed and why.
 * Retries never reach the application through a reply; the client proxy handles them. A command
 * whose outcome is unknown has no reply: its future fails instead (see {@link Client}).
 * Immutable.
 *
 * <pre>{@code
 * Reply r = client.sendAccess(cmd).join();
 * switch (r.status()) {
 *   case OK -> use(r.value());                    // executed once; the value is the server's answer
 *   case NOT_FOUND -> forget(r.object());         // that object does not exist; nothing changed
 *   case EXISTS -> alreadyThere(r.object());      // a create found the object; nothing changed
 *   case REFUSED -> log(r.reason());              // refused (a bad object or command); nothing changed
 * }
 * }</pre>
 */
public final class Reply {

  /** What happened to a command. Every status but {@link #OK} means the command changed nothing. */
  public enum Status {
    /** Executed (a delete: the object is gone); {@link #value()} is the server's answer. */
    OK,
    /** An object the command needs does not exist; {@link #object()} names it. */
    NOT_FOUND,
    /** A create found its object already there; {@link #object()} names it. */
    EXISTS,
    /** Refused without executing, for the {@link #reason()} given (for example an object that cannot be encoded). */
    REFUSED
  }

  private final Status status;
  private final Object value;
  private final ObjId object;
  private final String reason;

  private Reply(Status status, Object value, ObjId object, String reason) {
    this.status = status;
    this.value = value;
    this.object = object;
    this.reason = reason;
  }

  /**
   * Returns a positive outcome.
   *
   * @param value the application's reply, or null
   * @return the reply
   */
  public static Reply ok(Object value) {
    return new Reply(Status.OK, value, null, null);
  }

  /**
   * Returns the outcome of a command that needed an object that does not exist.
   *
   * @param missing the object
   * @return the reply
   */
  public static Reply notFound(ObjId missing) {
    return new Reply(Status.NOT_FOUND, null, Objects.requireNonNull(missing, "missing"),
        "object " + missing + " does not exist");
  }

  /**
   * Returns the outcome of a create whose object exists already.
   *
   * @param existing the object
   * @return the reply
   */
  public static Reply exists(ObjId existing) {
    return new Reply(Status.EXISTS, null, Objects.requireNonNull(existing, "existing"),
        "object " + existing + " already exists");
  }

  /**
   * Returns the outcome of a refused command.
   *
   * @param reason why
   * @return the reply
   */
  public static Reply refused(String reason) {
    return new Reply(Status.REFUSED, null, null, reason);
  }

  /** Returns what happened. */
  public Status status() {
    return status;
  }

  /** Returns true if the command was executed (or, for a delete, the object is gone). */
  public boolean isOk() {
    return status == Status.OK;
  }

  /** Returns the application's reply (null unless {@link Status#OK}). */
  public Object value() {
    return value;
  }

  /** Returns the object that was missing ({@link Status#NOT_FOUND}) or existing ({@link Status#EXISTS}), else null. */
  public ObjId object() {
    return object;
  }

  /** Returns why the command was not executed (null for ok). */
  public String reason() {
    return reason;
  }

  @Override
  public String toString() {
    return status == Status.OK ? "ok(" + value + ")" : status.name().toLowerCase() + "(" + reason + ")";
  }
}
