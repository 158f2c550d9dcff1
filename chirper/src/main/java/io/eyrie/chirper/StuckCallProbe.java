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
      new LinkedBlockingQueue<>(4096), r -> {
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
  /** Every resend, by message: when, to which node, why. Guarded by itself. */
  private final Map<MsgId, StringBuilder> events = new LinkedHashMap<>(16, 0.75f, false) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<MsgId, StringBuilder> e) {
      return size() > 100_000;
    }
  };

  StuckCallProbe(EmbeddedCluster cluster) {
    this.cluster = cluster;
  }

  @Override
  public void attemptFailed(MsgId msgId, int node, int attempts, Reason reason) {
    if (msgId == null) {
      return;
    }
    synchronized (events) {
      events.computeIfAbsent(msgId, k -> new StringBuilder()).append("  ").append(Instant.now()).append(" attempt ")
          .append(attempts).append(" to node ").append(node).append(": ").append(reason).append('\n');
    }
    if (attempts != 1) {
      return;
    }
    try {
      worker.execute(() -> {
        StringBuilder b = new StringBuilder("at ").append(Instant.now()).append(", after the first attempt (to node ")
            .append(node).append(") failed (").append(reason).append("):\n").append(describe(msgId));
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

  /** Returns the snapshot taken when the message's first attempt failed, and its resends; or null. */
  String snapshot(MsgId id) {
    String ev;
    synchronized (events) {
      StringBuilder b = events.get(id);
      ev = b == null ? "" : "resends:\n" + b;
    }
    String snap;
    synchronized (snapshots) {
      snap = snapshots.get(id);
    }
    if (snap == null && ev.isEmpty()) {
      return null;
    }
    return (snap == null ? "(no snapshot taken)\n" : snap) + ev;
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
