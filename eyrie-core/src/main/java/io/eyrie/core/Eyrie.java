package io.eyrie.core;

import io.eyrie.core.internal.CoreTypes;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.CodecRegistry;
import io.eyrie.multicast.Deliverer;
import java.util.function.Supplier;

/**
 * Wiring of a DS-SMR service onto the multicast layer: the codec registrations and the
 * deliverers of partitions and oracle. Package-private: a {@link Service} is the one way to wire
 * a service, and it (and a client without one) uses these.
 */
final class Eyrie {
  private static final CodecRegistry CORE = CoreTypes.register(CodecRegistry.newBuilder()).build();

  private Eyrie() {}

  /** Returns the registry of eyrie-core's classes; a service adds its own with ids from 100. */
  static CodecRegistry registry() {
    return CORE;
  }

  /**
   * Returns the deliverer factory of a DS-SMR service.
   *
   * @param partitions creates the application's server of one partition replica
   * @param oracle creates the oracle of one oracle replica
   * @return the factory to give a node or an embedded cluster
   */
  static Deliverer.Factory deliverers(Supplier<? extends StateMachine> partitions,
      Supplier<? extends Deliverer> oracle) {
    return (g, cluster, codec) -> {
      if (cluster.group(g).kind() != ClusterConfig.Kind.ORACLE) {
        return new PartitionServer(partitions.get(), g, cluster, codec);
      }
      Deliverer d = oracle.get();
      if (d instanceof ClusterAware a) {
        a.init(g, cluster, codec);
      }
      return d;
    };
  }
}
