package io.eyrie.examples.bank;

import io.eyrie.core.Service;
import io.eyrie.multicast.Deliverer;
import io.eyrie.oracle.OracleStateMachine;
import java.util.function.Supplier;

/** The bank as a service descriptor: what {@code bin/eyrie node --service} hosts. */
public final class BankService implements Supplier<Service> {

  /** For the node launcher. */
  public BankService() {}

  /**
   * Returns the bank with another oracle (tests use one that gathers objects at random).
   *
   * @param oracle creates an oracle replica
   * @return the service
   */
  public static Service with(Supplier<? extends Deliverer> oracle) {
    return Service.newBuilder()
        .type(100, Account.class)
        .type(101, BankOps.Transfer.class)
        .type(102, BankOps.Read.class)
        .type(103, BankOps.Deposit.class)
        .server(BankServer::new)
        .oracle(oracle)
        .build();
  }

  @Override
  public Service get() {
    return with(OracleStateMachine::new);
  }
}
