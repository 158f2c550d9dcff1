package io.eyrie.multicast;

import java.util.Collection;
import java.util.Collections;
import java.util.Set;
import java.util.TreeSet;

/**
 * The outcome of executing a message in one group: a reply, an error, completion without a
 * reply, or a wait for items from other groups. Immutable.
 */
public final class Execution {

  enum Kind { REPLY, ERROR, DONE, AWAIT, LATER, BLOCKED }

  private static final Execution DONE = new Execution(Kind.DONE, null, null, Set.of());
  private static final Execution BLOCKED = new Execution(Kind.BLOCKED, null, null, Set.of());

  private final Kind kind;
  private final Object reply;
  private final String error;
  private final Set<GroupId> awaited;

  private Execution(Kind kind, Object reply, String error, Set<GroupId> awaited) {
    this.kind = kind;
    this.reply = reply;
    this.error = error;
    this.awaited = awaited;
  }

  /**
   * Completes the message with a reply (sent to the client if this is the reply group).
   *
   * @param value a registered object, or null
   * @return the outcome
   */
  public static Execution reply(Object value) {
    return new Execution(Kind.REPLY, value, null, Set.of());
  }

  /**
   * Completes the message with an error reply.
   *
   * @param message what went wrong, for the client
   * @return the outcome
   */
  public static Execution error(String message) {
    return new Execution(Kind.ERROR, null, message, Set.of());
  }

  /** Completes the message without a reply (the reply group answers null). */
  public static Execution done() {
    return DONE;
  }

  /**
   * Parks the message until at least one item for it has arrived from each of the groups.
   *
   * @param groups the groups to hear from; not empty
   * @return the outcome
   */
  public static Execution awaitFrom(Collection<GroupId> groups) {
    if (groups.isEmpty()) {
      throw new IllegalArgumentException("awaitFrom needs at least one group");
    }
    return new Execution(Kind.AWAIT, null, null, Collections.unmodifiableSet(new TreeSet<>(groups)));
  }

  /**
   * Lets the messages delivered after this one run now, and resumes this one later, out of
   * queue order, once at least one item for it has arrived from each of the groups
   * ({@link Deliverer#resume} is then called for it, between two other executions, on the
   * thread that applies the log). Use it when the rest of the execution only needs to wait for
   * another group, and what it will change is kept apart by the application until then (as the
   * DS-SMR oracle does for the map entries of a create or delete). Until it completes, the
   * message counts as in progress: its items are buffered and its reply, if this is the reply
   * group, is sent when it completes. If {@code resume} answers {@code resumeLater} again (it
   * waits for something of its own state, such as an earlier message's completion), it is
   * resumed again when another item arrives for it or another message completes here.
   *
   * @param groups the groups to hear from; not empty
   * @return the outcome
   */
  public static Execution resumeLater(Collection<GroupId> groups) {
    if (groups.isEmpty()) {
      throw new IllegalArgumentException("resumeLater needs at least one group");
    }
    return new Execution(Kind.LATER, null, null, Collections.unmodifiableSet(new TreeSet<>(groups)));
  }

  /**
   * The message cannot start yet: something delivered before it that is still in progress here
   * (waiting with {@link #resumeLater}, or itself blocked) holds what it needs, as a partition of
   * eyrie-core holds the objects of a command that waits for another group. Nothing of this
   * delivery counts: the message leaves the queue without a started-signal, the messages behind
   * it run, and {@link Deliverer#deliver} is called for it again, in delivery order among the
   * blocked ones, after each message that completes here, until it answers something else (a
   * wait then never parks the queue: it waits as with {@code resumeLater}). So the deliverer must
   * neither send items nor change state before answering this (a send makes the answer an
   * error), and must keep apart what blocked messages will touch. Only an answer of
   * {@code deliver}, and only while another message is in progress here; otherwise it is an
   * error (nothing could ever complete to let it start).
   *
   * @return the outcome
   */
  public static Execution blocked() {
    return BLOCKED;
  }

  Kind kind() {
    return kind;
  }

  /** Returns the reply value (null unless this is a reply). */
  public Object replyValue() {
    return reply;
  }

  /** Returns the error message (null unless this is an error). */
  public String errorMessage() {
    return error;
  }

  /** Returns the awaited groups (empty unless this is a wait or a later resume). */
  public Set<GroupId> awaited() {
    return awaited;
  }

  /** Returns true if the message is parked. */
  public boolean isAwait() {
    return kind == Kind.AWAIT;
  }

  /** Returns true if the message waits for items without holding up the messages after it. */
  public boolean isResumeLater() {
    return kind == Kind.LATER;
  }

  /** Returns true if the message cannot start yet (see {@link #blocked}). */
  public boolean isBlocked() {
    return kind == Kind.BLOCKED;
  }

  /** Returns true if this is an error. */
  public boolean isError() {
    return kind == Kind.ERROR;
  }

  @Override
  public String toString() {
    return switch (kind) {
      case REPLY -> "reply(" + reply + ")";
      case ERROR -> "error(" + error + ")";
      case DONE -> "done";
      case AWAIT -> "awaitFrom" + awaited;
      case LATER -> "resumeLater" + awaited;
      case BLOCKED -> "blocked";
    };
  }
}
