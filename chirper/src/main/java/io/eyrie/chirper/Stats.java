package io.eyrie.chirper;

import io.eyrie.core.ClientStats;
import java.util.List;

/** Arithmetic on client proxy counters: a load spreads over several proxies and runs after a setup. */
final class Stats {
  private Stats() {}

  static ClientStats sum(List<ChirperClient> clients) {
    ClientStats s = zero();
    for (ChirperClient c : clients) {
      s = plus(s, c.proxy().stats());
    }
    return s;
  }

  static ClientStats zero() {
    return new ClientStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  }

  static ClientStats plus(ClientStats a, ClientStats b) {
    return new ClientStats(a.commands() + b.commands(), a.cacheHits() + b.cacheHits(), a.consults() + b.consults(),
        a.moves() + b.moves(), a.movedObjects() + b.movedObjects(), a.retries() + b.retries(),
        a.fallbacks() + b.fallbacks(), a.multiPartition() + b.multiPartition(), a.direct() + b.direct(),
        a.reads() + b.reads());
  }

  static ClientStats minus(ClientStats a, ClientStats b) {
    return new ClientStats(a.commands() - b.commands(), a.cacheHits() - b.cacheHits(), a.consults() - b.consults(),
        a.moves() - b.moves(), a.movedObjects() - b.movedObjects(), a.retries() - b.retries(),
        a.fallbacks() - b.fallbacks(), a.multiPartition() - b.multiPartition(), a.direct() - b.direct(),
        a.reads() - b.reads());
  }
}
