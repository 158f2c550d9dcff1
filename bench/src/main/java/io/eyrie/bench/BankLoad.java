package io.eyrie.bench;

import java.nio.file.Path;

/**
 * The options the three bank benchmarks ({@link BankPlacementBenchmark}, {@link ElasticBenchmark},
 * {@link CommunityShiftBenchmark}) share: {@code --clients} load clients (default 8) with
 * {@code --window} outstanding transfers each (default 16), {@code --accounts} accounts and the
 * {@code --out} folder for the results (default {@code bench/results/issue16}).
 *
 * @param clients load clients
 * @param window outstanding transfers per client
 * @param accounts accounts in the bank
 * @param out where the results go
 */
record BankLoad(int clients, int window, int accounts, Path out) {

  /**
   * Reads the shared options.
   *
   * @param o the command line
   * @param accounts the benchmark's default number of accounts
   * @return the options, defaults filled in
   */
  static BankLoad of(BenchArgs o, int accounts) {
    return new BankLoad(o.integer("clients", 8), o.integer("window", 16), o.integer("accounts", accounts),
        o.path("out", "bench/results/issue16"));
  }

  /** Transfers in flight over all clients. */
  int outstanding() {
    return clients * window;
  }
}
