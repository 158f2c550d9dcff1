package io.eyrie.chirper;

import io.eyrie.multicast.CallTimeoutException;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.Node;
import io.eyrie.multicast.ResendListener;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Diagnostics for the demo's embedded cluster: when a multicast's first attempt times out, takes
 * what every replica knows of that message at that moment (off the client's I/O thread), so that
 * if the command later fails with a timeout, the state from when it got stuck can be printed
 * instead of only the state 30 s later. Keeps the most recent {@value #KEPT} snapshots.
 */
final class StuckCallProbe implements ResendListener, AutoCloseable {
  private static final int KEPT = 256;

  private final EmbeddedCluster cluster;
  private final ExecutorService worker = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS,
      new LinkedBlockingQueue<>(64), r -> {
        Thread t = new Thread(r, "chirper-stuck-call-probe");
        t.setDaemon(true);
        return t;
      }, new ThreadPoolExecutor.DiscardPolicy());
  private final Map<MsgId, String> snapshots = new LinkedHashMap<>(16, 0.75f, false) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<MsgId, String> e) {
      return size() > KEPT;
    }
  };

  StuckCallProbe(EmbeddedCluster cluster) {
    this.cluster = cluster;
  }

  @Override
  public void attemptFailed(MsgId msgId, int node, int attempts, Reason reason) {
    if (msgId == null || reason != Reason.ATTEMPT_TIMEOUT || attempts != 1) {
      return;
    }
    try {
      worker.execute(() -> {
        StringBuilder b = new StringBuilder("at ").append(Instant.now()).append(", after the first attempt (to node ")
            .append(node).append(") timed out:\n").append(describe(msgId));
        synchronized (snapshots) {
          snapshots.put(msgId, b.toString());
        }
      });
    } catch (RejectedExecutionException e) {
      // closed: nothing to record
    }
  }

  /** Returns what every running replica knows of a message now. */
  String describe(MsgId id) {
    StringBuilder b = new StringBuilder();
    for (Node n : cluster.runningNodes().values()) {
      b.append(n.describe(id));
    }
    return b.toString();
  }

  /** Returns the snapshot taken when the message's first attempt timed out, or null. */
  String snapshot(MsgId id) {
    synchronized (snapshots) {
      return snapshots.get(id);
    }
  }

  /** Returns the id of the multicast a failure timed out on, or null if it is not a call timeout. */
  static MsgId timedOut(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof CallTimeoutException te) {
        return te.msgId();
      }
      for (Throwable s : c.getSuppressed()) {
        MsgId id = timedOut(s);
        if (id != null) {
          return id;
        }
      }
    }
    return null;
  }

  @Override
  public void close() {
    worker.shutdownNow();
  }
}
