package io.eyrie.examples.kv;

import io.eyrie.core.Service;
import java.util.function.Supplier;

/**
 * The key-value store as one service descriptor. {@code bin/eyrie node --service
 * io.eyrie.examples.kv.KvService} hosts it; clients build with the same descriptor.
 */
public final class KvService implements Supplier<Service> {

  /** For the node launcher. */
  public KvService() {}

  @Override
  public Service get() {
    return Service.newBuilder()
        .type(100, Entry.class)
        .type(101, KvOps.Get.class)
        .type(102, KvOps.Put.class)
        .type(103, KvOps.Copy.class)
        .server(KvServer::new)
        .oracle(KvOracle::new)
        .build();
  }
}
