package io.eyrie.examples.kv;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Service;
import io.eyrie.multicast.CallTimeoutException;
import io.eyrie.multicast.CodecRegistry;
import io.eyrie.multicast.Deliverer;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.NodeApp;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What a first service ran into (issue 14 item 8), each checked on the key-value example. */
@Timeout(180)
class FirstServiceTest {

  private static Set<Thread> nonDaemon() {
    return Thread.getAllStackTraces().keySet().stream().filter(t -> t.isAlive() && !t.isDaemon())
        .collect(Collectors.toSet());
  }

  /** Three nodes, two partitions and the oracle, running the service. */
  private static EmbeddedCluster kvCluster(Service kv) {
    return EmbeddedCluster.newBuilder().nodes(3).partitions(2).oracle(true).app(kv).start();
  }

  /** An exception after start() must not leave threads that keep the JVM from exiting. */
  @Test
  void embeddedClusterAndClientThreadsAreDaemons() throws Exception {
    Set<Thread> before = nonDaemon();
    Service kv = new KvService().get();
    try (EmbeddedCluster cluster = kvCluster(kv);
        Client client = Client.newBuilder().cluster(cluster.cluster()).service(kv).build()) {
      client.sendCreate(Command.create(ObjId.valueOf(7), "x")).get(30, SECONDS);
      client.sendAccess(Command.access(new KvOps.Get(), ObjId.valueOf(7))).get(30, SECONDS);
      cluster.kill(1);
      cluster.restart(1);
      // Netty's GlobalEventExecutor runs short-lived non-daemon threads that end after a second
      // without work: only a non-daemon thread that stays can keep the JVM from exiting.
      List<String> names = List.of();
      long deadline = System.nanoTime() + 10_000_000_000L;
      do {
        Set<Thread> after = nonDaemon();
        after.removeAll(before);
        names = after.stream().map(Thread::getName).sorted().toList();
        if (!names.isEmpty()) {
          java.util.concurrent.locks.LockSupport.parkNanos(100_000_000L);
        }
      } while (!names.isEmpty() && System.nanoTime() < deadline);
      assertEquals(List.of(), names, "non-daemon threads started by the cluster or the client that stay");
    }
  }

  /** The service, with every group's answered queries counted. */
  static final class CountingApp implements NodeApp {
    final Service inner = new KvService().get();
    final Map<GroupId, AtomicInteger> answered = new ConcurrentHashMap<>();

    @Override
    public CodecRegistry registry() {
      return inner.registry();
    }

    @Override
    public Object readinessQuery() {
      return inner.readinessQuery();
    }

    @Override
    public Deliverer.Factory deliverers() {
      Deliverer.Factory f = inner.deliverers();
      return (g, cluster, codec) -> {
        Deliverer d = f.create(g, cluster, codec);
        AtomicInteger n = answered.computeIfAbsent(g, k -> new AtomicInteger());
        return new Deliverer() {
          @Override
          public Execution deliver(ExecutionContext ctx) {
            return d.deliver(ctx);
          }

          @Override
          public Execution resume(ExecutionContext ctx) {
            return d.resume(ctx);
          }

          @Override
          public Object query(Object q) {
            Object r = d.query(q);
            n.incrementAndGet();
            return r;
          }

          @Override
          public byte[] snapshot() {
            return d.snapshot();
          }

          @Override
          public void restore(byte[] state) {
            d.restore(state);
          }
        };
      };
    }
  }

  /** A first query after start() used to wait 3-10 s for a new leader able to serve reads. */
  @Test
  void startReturnsOnlyOnceEveryGroupAnswersQueries() {
    CountingApp app = new CountingApp();
    try (EmbeddedCluster cluster = EmbeddedCluster.newBuilder().nodes(3).partitions(2).oracle(true).app(app).start()) {
      for (GroupId g : cluster.cluster().groups().keySet()) {
        AtomicInteger n = app.answered.get(g);
        assertTrue(n != null && n.get() > 0, g + " answered a query before start() returned: " + app.answered);
      }
    }
  }

  @Test
  void theLocationCacheCanBeCleared() throws Exception {
    Service kv = new KvService().get();
    try (EmbeddedCluster cluster = kvCluster(kv);
        Client client = Client.newBuilder().cluster(cluster.cluster()).service(kv).build()) {
      ObjId k = ObjId.valueOf(11);
      client.sendCreate(Command.create(k, "v")).get(30, SECONDS);
      client.sendAccess(Command.access(new KvOps.Get(), k)).get(30, SECONDS);
      assertNotNull(client.cachedLocation(k));
      client.clearLocationCache();
      assertNull(client.cachedLocation(k));
      long consults = client.stats().consults();
      assertEquals("v", client.sendAccess(Command.access(new KvOps.Get(), k)).get(30, SECONDS).value());
      assertEquals(consults + 1, client.stats().consults(), "the next command asked the oracle");
    }
  }

  /** The timeout bounds the command; the attempt timeout is the client builder's. */
  @Test
  void aCommandWithoutAnswerFailsAsUnknownWithinItsTotalTimeout() throws Exception {
    Service kv = new KvService().get();
    assertThrows(IllegalArgumentException.class, () -> Client.newBuilder().attemptTimeoutMs(0));
    try (EmbeddedCluster cluster = kvCluster(kv);
        Client client = Client.newBuilder().cluster(cluster.cluster()).service(kv)
            .totalTimeoutMs(1500).attemptTimeoutMs(200).build()) {
      ObjId k = ObjId.valueOf(12);
      client.sendCreate(Command.create(k, "v")).get(30, SECONDS);
      cluster.kill(2);
      cluster.kill(3); // no group has a majority now
      long t0 = System.nanoTime();
      ExecutionException e = assertThrows(ExecutionException.class,
          () -> client.sendAccess(Command.access(new KvOps.Put("w"), k)).get(30, SECONDS));
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertInstanceOf(CallTimeoutException.class, e.getCause(), "an unanswered command's outcome is unknown");
      assertTrue(e.getCause().getMessage().contains("outcome unknown"), e.getCause().getMessage());
      assertTrue(ms >= 1400 && ms < 6000, "failed after " + ms + " ms, the total timeout is 1500 ms");
    }
  }
}
