package io.eyrie.bench;

import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Reply;
import io.eyrie.core.Service;
import io.eyrie.examples.bank.BankService;
import io.eyrie.multicast.Deliverer;
import io.eyrie.multicast.EmbeddedCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The bank benchmarks' cluster: 3 embedded nodes hosting {@link BankService} with the oracle a
 * benchmark chooses, its load clients and one more client (the mover) for the rebalancer, the
 * partition table and the audit. Closing it closes the clients (in the background) and the
 * cluster.
 */
final class BankBenchCluster implements AutoCloseable {
  final Service service;
  final EmbeddedCluster cluster;
  final List<Client> clients = new ArrayList<>();
  final Client mover;

  private BankBenchCluster(int partitions, Supplier<? extends Deliverer> oracle, int clients, Client.Mode mode) {
    service = BankService.with(oracle);
    cluster = EmbeddedCluster.newBuilder().nodes(3).partitions(partitions).oracle(true).app(service).start();
    for (int i = 0; i < clients; i++) {
      this.clients.add(client(mode));
    }
    mover = client(Client.Mode.DSSMR);
  }

  /**
   * Starts the cluster and its clients.
   *
   * @param partitions how many partitions
   * @param oracle the oracle
   * @param clients how many load clients
   * @param mode the load clients' mode
   * @return the cluster
   */
  static BankBenchCluster start(int partitions, Supplier<? extends Deliverer> oracle, int clients, Client.Mode mode) {
    return new BankBenchCluster(partitions, oracle, clients, mode);
  }

  private Client client(Client.Mode mode) {
    return Client.newBuilder().cluster(cluster.cluster()).service(service).mode(mode).build();
  }

  /** Creates accounts 0 to {@code n - 1} with {@code balance} each, spread over the load clients. */
  void createAccounts(int n, long balance) throws Exception {
    List<CompletableFuture<Reply>> setup = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      setup.add(clients.get(i % clients.size()).sendCreate(Command.create(ObjId.valueOf(i), balance)));
    }
    CompletableFuture.allOf(setup.toArray(new CompletableFuture[0])).get(120, TimeUnit.SECONDS);
  }

  @Override
  public void close() {
    MulticastBenchmark.closeInBackground(clients);
    mover.close();
    cluster.close();
  }
}
