package io.eyrie.multicast.testing;

import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MulticastClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Concurrent clients multicasting unique Long tokens to random subsets of groups with random
 * reply groups; remembers each token's destinations and which tokens were acknowledged.
 */
public final class MulticastWorkload {
  public final Map<Long, Set<GroupId>> destsOf = new ConcurrentHashMap<>();
  public final Set<Long> acked = ConcurrentHashMap.newKeySet();
  public final Set<Long> failed = ConcurrentHashMap.newKeySet();
  /** Why calls failed: the first few failure messages. */
  public final java.util.Queue<String> failures = new java.util.concurrent.ConcurrentLinkedQueue<>();
  public final AtomicInteger completed = new AtomicInteger();
  private final EmbeddedCluster cluster;
  private final long seed;
  private final int clients;
  private final int perClient;
  private final int window;

  public MulticastWorkload(EmbeddedCluster cluster, long seed, int clients, int perClient, int window) {
    this.cluster = cluster;
    this.seed = seed;
    this.clients = clients;
    this.perClient = perClient;
    this.window = window;
  }

  /** Total number of multicasts the workload issues. */
  public int total() {
    return clients * perClient;
  }

  /** Runs all clients to completion (every call answered or failed). */
  public void run() throws InterruptedException {
    List<GroupId> groups = new ArrayList<>(cluster.cluster().groupIds());
    List<Thread> threads = new ArrayList<>();
    List<Throwable> errors = new ArrayList<>();
    for (int c = 0; c < clients; c++) {
      final int ci = c;
      Thread t = new Thread(() -> {
        Random rnd = new Random(seed * 31 + ci);
        Semaphore permits = new Semaphore(window);
        try (MulticastClient client = cluster.newClient()) {
          List<CompletableFuture<Object>> all = new ArrayList<>();
          for (int n = 0; n < perClient; n++) {
            TreeSet<GroupId> dests = new TreeSet<>();
            int k = 1 + rnd.nextInt(groups.size());
            while (dests.size() < k) {
              dests.add(groups.get(rnd.nextInt(groups.size())));
            }
            List<GroupId> dl = new ArrayList<>(dests);
            GroupId reply = dl.get(rnd.nextInt(dl.size()));
            long token = ((long) (ci + 1) << 32) | n;
            destsOf.put(token, dests);
            permits.acquire();
            CompletableFuture<Object> f = client.multicast(dests, reply, token);
            all.add(f);
            f.whenComplete((r, e) -> {
              if (e == null) {
                acked.add(token);
              } else {
                failed.add(token);
                if (failures.size() < 5) {
                  failures.add(token + ": " + e);
                }
              }
              completed.incrementAndGet();
              permits.release();
            });
          }
          CompletableFuture.allOf(all.toArray(new CompletableFuture[0])).handle((r, e) -> null).get(5, TimeUnit.MINUTES);
        } catch (Exception e) {
          synchronized (errors) {
            errors.add(e);
          }
        }
      }, "workload-client-" + c);
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) {
      t.join();
    }
    if (!errors.isEmpty()) {
      AssertionError ae = new AssertionError("workload client failed: " + errors.get(0));
      errors.forEach(ae::addSuppressed);
      throw ae;
    }
  }
}
