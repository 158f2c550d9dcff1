package io.eyrie.core.protocol;

import io.eyrie.core.ObjId;

/**
 * A reply to a command: status, the application's value (OK) or why not, and objects to
 * co-locate (RETRY) or the object missing (NOT_FOUND) or existing (EXISTS).
 */
public record CoreReply(Status status, Object value, ObjId[] extra) {
  /** What happened to the command. */
  public enum Status {
    /** The command was executed; the value is the application's reply. */
    OK,
    /**
     * Nothing changed; locate the command's objects again (one was not where the client thought,
     * or a partition was retired or added since), adding {@code extra} if the application asked
     * for more objects.
     */
    RETRY,
    /** An object the command needs does not exist (named in {@code extra}). */
    NOT_FOUND,
    /** The object a create names exists already (named in {@code extra}). */
    EXISTS,
    /** The command was refused (the value says why) and changed nothing. */
    REFUSED,
    /** A partition's answer to a {@link ReadReq} it does not serve now: send the command through the log. */
    BUSY
  }

  public static CoreReply ok(Object value) {
    return new CoreReply(Status.OK, value, null);
  }

  public static CoreReply notFound(ObjId id) {
    return new CoreReply(Status.NOT_FOUND, "object " + id + " does not exist", new ObjId[] {id});
  }

  public static CoreReply exists(ObjId id) {
    return new CoreReply(Status.EXISTS, "object " + id + " already exists", new ObjId[] {id});
  }

  public static CoreReply refused(String why) {
    return new CoreReply(Status.REFUSED, why, null);
  }

  public static CoreReply retry(ObjId[] extra) {
    return new CoreReply(Status.RETRY, null, extra);
  }

  public static CoreReply busy(String why) {
    return new CoreReply(Status.BUSY, why, null);
  }
}
