package io.eyrie.examples.bank;

import io.eyrie.core.ObjId;
import io.eyrie.core.PRObject;

/** A bank account: the example bank's object. */
public final class Account extends PRObject {
  long balance;

  private Account() {}

  Account(ObjId id, long balance) {
    super(id);
    this.balance = balance;
  }

  /** Returns the balance. */
  public long balance() {
    return balance;
  }
}
