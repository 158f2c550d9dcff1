package io.eyrie.oracle.bank;

import io.eyrie.core.ObjId;
import io.eyrie.core.PRObject;

/** A bank account: the test service's object. */
public final class Account extends PRObject {
  long balance;

  private Account() {}

  Account(ObjId id, long balance) {
    super(id);
    this.balance = balance;
  }
}
