package io.eyrie.multicast.internal;

import java.io.IOException;
import java.util.function.Supplier;
import org.apache.ratis.client.RaftClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Ratis client that is replaced after a failure. Ratis's ordered async requests travel in a
 * sliding window that stays closed once a request has failed for good (retries exhausted), so
 * every later request on that client would fail too.
 */
final class RaftClientHolder implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RaftClientHolder.class);

  private final Supplier<RaftClient> factory;
  private RaftClient client;
  private boolean closed;

  RaftClientHolder(Supplier<RaftClient> factory) {
    this.factory = factory;
  }

  /** Returns the current client, creating it if needed. */
  synchronized RaftClient get() {
    if (closed) {
      throw new IllegalStateException("closed");
    }
    if (client == null) {
      client = factory.get();
    }
    return client;
  }

  /**
   * Drops the client if it is the one that failed; the next {@link #get()} builds a new one.
   * Callers are usually Ratis or Netty callback threads, and closing a Ratis client waits for
   * its connections to close (up to seconds), so the old client is closed in the background.
   */
  void failed(RaftClient failed) {
    RaftClient drop = null;
    synchronized (this) {
      if (client == failed) {
        drop = client;
        client = null;
      }
    }
    if (drop != null) {
      RaftClient c = drop;
      CLOSER.execute(() -> closeQuietly(c));
    }
  }

  private static final java.util.concurrent.ExecutorService CLOSER =
      java.util.concurrent.Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "eyrie-raft-client-closer");
        t.setDaemon(true);
        return t;
      });

  @Override
  public void close() {
    RaftClient drop;
    synchronized (this) {
      closed = true;
      drop = client;
      client = null;
    }
    closeQuietly(drop);
  }

  private static void closeQuietly(RaftClient c) {
    if (c == null) {
      return;
    }
    try {
      c.close();
    } catch (IOException | RuntimeException e) {
      LOG.debug("closing a Ratis client: {}", e.toString());
    }
  }
}
