package io.eyrie.it;

import io.eyrie.core.Client;
import io.eyrie.examples.bank.BankService;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.oracle.OracleStateMachine;
import java.util.function.Supplier;

/** Starts embedded DS-SMR bank clusters for tests. */
final class DssmrFixture {
  private DssmrFixture() {}

  static EmbeddedCluster bank(int partitions, Supplier<? extends OracleStateMachine> oracle) {
    return EmbeddedCluster.newBuilder().nodes(3).partitions(partitions).oracle(true)
        .options(NodeOptions.newBuilder().electionTimeoutMs(600, 1200).build())
        .app(BankService.with(oracle)).start();
  }

  static EmbeddedCluster bank(int partitions) {
    return bank(partitions, OracleStateMachine::new);
  }

  static Client client(EmbeddedCluster c, Client.Mode mode, int retryThreshold) {
    return Client.newBuilder().cluster(c.cluster()).service(new BankService().get()).mode(mode)
        .retryThreshold(retryThreshold).build();
  }
}
