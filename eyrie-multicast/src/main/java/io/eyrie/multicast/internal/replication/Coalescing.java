package io.eyrie.multicast.internal.replication;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wake-ups of a per-key task on one executor, coalesced: while a key's task is queued, another
 * request for it joins the queued run (a sender's pump, an exchange's flush). The task runs with
 * the key's flag cleared first, so a request during the run queues one more.
 */
final class Coalescing<K> {
  private static final Logger LOG = LoggerFactory.getLogger(Coalescing.class);

  private final Executor executor;
  private final String what;
  private final Map<K, AtomicBoolean> queued = new ConcurrentHashMap<>();

  /** Runs on {@code executor}; {@code what} names the task in a failure's log line. */
  Coalescing(Executor executor, String what) {
    this.executor = executor;
    this.what = what;
  }

  /** Queues {@code task} for {@code key} unless one is queued already (or the executor is closed). */
  void request(K key, Runnable task) {
    AtomicBoolean flag = queued.computeIfAbsent(key, k -> new AtomicBoolean());
    if (!flag.compareAndSet(false, true)) {
      return;
    }
    try {
      executor.execute(() -> {
        flag.set(false);
        try {
          task.run();
        } catch (RuntimeException e) {
          LOG.warn("{} ({}) failed: {}", what, key, e.toString());
        }
      });
    } catch (RejectedExecutionException closing) {
      flag.set(false);
    }
  }
}
