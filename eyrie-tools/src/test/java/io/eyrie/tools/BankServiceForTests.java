package io.eyrie.tools;

import io.eyrie.core.Eyrie;
import io.eyrie.examples.bank.BankServer;
import io.eyrie.multicast.CodecRegistry;
import io.eyrie.multicast.DelivererFactory;
import io.eyrie.oracle.OracleStateMachine;
import java.util.function.Supplier;

/**
 * The example bank as a service class for {@code eyrie node --service}: a public no-argument
 * constructor and a {@code Supplier} of a descriptor with {@code registry()} and
 * {@code deliverers()} (the shape of eyrie-core's service descriptor).
 */
public final class BankServiceForTests implements Supplier<BankServiceForTests.Descriptor> {

  /** For the node launcher. */
  public BankServiceForTests() {}

  /** The descriptor. */
  public static final class Descriptor {
    /** Returns the bank's codec registrations. */
    public CodecRegistry registry() {
      return BankServer.registry();
    }

    /** Returns the bank's partition servers and the default oracle. */
    public DelivererFactory deliverers() {
      return Eyrie.deliverers(BankServer::new, OracleStateMachine::new);
    }
  }

  @Override
  public Descriptor get() {
    return new Descriptor();
  }
}
