package io.eyrie.core;

/**
 * The outcome of a command: ok with the application's value, or nok with a reason (an access
 * to an object that does not exist, a create of one that does). Retries never reach the
 * application through a reply; they are handled by the client proxy. Immutable.
 */
public final class Reply {
  private final boolean ok;
  private final Object value;
  private final String reason;

  private Reply(boolean ok, Object value, String reason) {
    this.ok = ok;
    this.value = value;
    this.reason = reason;
  }

  /**
   * Returns a positive outcome.
   *
   * @param value the application's reply, or null
   * @return the reply
   */
  public static Reply ok(Object value) {
    return new Reply(true, value, null);
  }

  /**
   * Returns a negative outcome.
   *
   * @param reason why the command was not executed
   * @return the reply
   */
  public static Reply nok(String reason) {
    return new Reply(false, null, reason);
  }

  /** Returns true if the command was executed (or, for a delete, the object is gone). */
  public boolean isOk() {
    return ok;
  }

  /** Returns the application's reply (null for nok). */
  public Object value() {
    return value;
  }

  /** Returns why the command was not executed (null for ok). */
  public String reason() {
    return reason;
  }

  @Override
  public String toString() {
    return ok ? "ok(" + value + ")" : "nok(" + reason + ")";
  }
}
