package io.eyrie.oracle;

import io.eyrie.core.Client;
import io.eyrie.core.Eyrie;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.examples.bank.BankServer;
import java.util.function.Supplier;

/** Starts embedded DS-SMR bank clusters for tests. */
final class DssmrFixture {
  private DssmrFixture() {}

  static EmbeddedCluster bank(int partitions, Supplier<? extends OracleStateMachine> oracle) {
    return EmbeddedCluster.newBuilder().nodes(3).partitions(partitions).oracle(true)
        .options(NodeOptions.newBuilder().registry(BankServer.registry()).electionTimeoutMs(600, 1200).build())
        .deliverers(Eyrie.deliverers(BankServer::new, oracle)).start();
  }

  static EmbeddedCluster bank(int partitions) {
    return bank(partitions, OracleStateMachine::new);
  }

  static Client client(EmbeddedCluster c, Client.Mode mode, int retryThreshold) {
    return Client.newBuilder().cluster(c.cluster()).registry(BankServer.registry()).mode(mode)
        .retryThreshold(retryThreshold).build();
  }
}
