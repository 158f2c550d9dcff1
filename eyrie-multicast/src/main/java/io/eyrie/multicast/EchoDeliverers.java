package io.eyrie.multicast;

/**
 * A {@link Deliverer.Factory} whose deliverers answer every message with its own payload and keep
 * no state: the simplest service, for trying a cluster and for measuring the multicast alone.
 */
public final class EchoDeliverers implements Deliverer.Factory {

  /** Creates the factory. */
  public EchoDeliverers() {}

  @Override
  public Deliverer create(GroupId group, ClusterConfig cluster, Codec codec) {
    return new Deliverer() {
      @Override
      public Execution deliver(ExecutionContext ctx) {
        return Execution.reply(ctx.payload());
      }

      @Override
      public byte[] snapshot() {
        return new byte[0];
      }

      @Override
      public void restore(byte[] state) {}
    };
  }
}
