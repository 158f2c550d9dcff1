package io.eyrie.examples.kv;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Service;
import io.eyrie.multicast.EmbeddedCluster;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Owns the end-to-end check of the client's bounded location cache on a real 3-node cluster:
 * a client whose cache holds 8 objects creates 40; its cache stays within 8, and a command on
 * an object it evicted consults the oracle and succeeds.
 */
class BoundedLocationCacheTest {

  @Test
  @Timeout(180)
  void aCommandOnAnEvictedObjectConsultsTheOracleAndWorks() throws Exception {
    Service kv = new KvService().get();
    try (EmbeddedCluster cluster = EmbeddedCluster.newBuilder().nodes(3).partitions(2).oracle(true).app(kv).start()) {
      cluster.awaitLeaders(Duration.ofSeconds(60));
      try (Client client = Client.newBuilder().cluster(cluster.cluster()).service(kv).maxCachedLocations(8).build()) {
        for (int i = 0; i < 40; i++) {
          assertTrue(client.sendCreate(Command.create(ObjId.valueOf(i), "v" + i)).get(30, SECONDS).isOk());
          assertTrue(client.cachedLocations() <= 8, client.cachedLocations() + " cached after " + (i + 1));
        }
        ObjId evicted = null;
        for (int i = 0; i < 40 && evicted == null; i++) {
          if (client.cachedLocation(ObjId.valueOf(i)) == null) {
            evicted = ObjId.valueOf(i);
          }
        }
        assertNotNull(evicted, "40 objects in a cache of 8: some were evicted");
        long consults = client.stats().consults();
        assertEquals("v" + evicted.value(),
            client.sendAccess(Command.access(new KvOps.Get(), evicted)).get(30, SECONDS).value());
        assertEquals(consults + 1, client.stats().consults(), "the miss asked the oracle");
        assertNotNull(client.cachedLocation(evicted), "and cached the answer");
        assertTrue(client.cachedLocations() <= 8, client.cachedLocations() + " cached");
      }
    }
  }
}
