package io.eyrie.examples.bank;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.PRObject;
import io.eyrie.core.StateMachine;

/**
 * An example service: a bank of accounts on DS-SMR. A transfer touches two accounts (a
 * multi-partition command until they share a partition); a read returns the balances of every
 * account it names. Eyrie's DS-SMR integration tests use it and so does the jepsen harness's bank
 * workload. Create an account with {@code Command.create(id, (Long) initialBalance)}. The
 * service descriptor is {@link BankService}.
 */
public final class BankServer extends StateMachine {

  @Override
  protected Object executeCommand(Command c) {
    Object op = c.op();
    if (op instanceof BankOps.Transfer t) {
      Account from = (Account) getObject(ObjId.valueOf(t.from()));
      Account to = (Account) getObject(ObjId.valueOf(t.to()));
      if (from.balance < t.amount()) {
        return "insufficient";
      }
      from.balance -= t.amount();
      to.balance += t.amount();
      return "ok";
    }
    if (op instanceof BankOps.Read) {
      long[] out = new long[c.objects().size()];
      int i = 0;
      for (ObjId id : c.objects()) {
        out[i++] = ((Account) getObject(id)).balance;
      }
      return out;
    }
    if (op instanceof BankOps.Deposit d) {
      Account a = (Account) getObject(c.target());
      a.balance += d.amount();
      return a.balance;
    }
    throw new IllegalArgumentException("unknown operation " + op);
  }

  @Override
  protected PRObject createObject(Command c) {
    return new Account(c.target(), (Long) c.op());
  }
}
