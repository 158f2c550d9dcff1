package io.eyrie.examples.kv;

import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Service;
import io.eyrie.multicast.EmbeddedCluster;
import java.util.concurrent.TimeUnit;

/** One start and two commands, run by {@code QuietLoggingTest} in a JVM without a logback configuration. */
public final class QuietStartMain {
  private QuietStartMain() {}

  public static void main(String[] args) throws Exception {
    Service kv = new KvService().get();
    try (EmbeddedCluster cluster = EmbeddedCluster.newBuilder().nodes(3).partitions(2).oracle(true).app(kv).start();
        Client client = Client.newBuilder().cluster(cluster.cluster()).service(kv).build()) {
      client.sendCreate(Command.create(ObjId.valueOf(1), "v")).get(60, TimeUnit.SECONDS);
      System.out.println("QUIET-START-MAIN " + client.sendAccess(Command.access(new KvOps.Get(), ObjId.valueOf(1)))
          .get(60, TimeUnit.SECONDS));
    }
  }
}
