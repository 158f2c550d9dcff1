package io.eyrie.chirper;

import io.eyrie.multicast.CallTimeoutException;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.MulticastClient;
import io.eyrie.multicast.Node;
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
final class StuckCallProbe implements MulticastClient.ResendListener, AutoCloseable {
  private static final int KEPT = 20_000;
  /** After this many failed attempts of one call, every thread's stack is dumped once. */
  private static final int STACKS_AFTER = 5;

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

  private final java.nio.file.Path dir;
  private final java.util.concurrent.atomic.AtomicBoolean stacksDumped = new java.util.concurrent.atomic.AtomicBoolean();

  /**
   * Creates the probe.
   *
   * @param cluster the cluster whose replicas are asked
   * @param dir where the one thread dump goes (when a call failed {@value #STACKS_AFTER} times)
   */
  StuckCallProbe(EmbeddedCluster cluster, java.nio.file.Path dir) {
    this.cluster = cluster;
    this.dir = dir;
  }

  private void dumpStacks(MsgId id) {
    StringBuilder b = new StringBuilder("thread stacks at ").append(Instant.now()).append(", when ").append(id)
        .append(" had failed ").append(STACKS_AFTER).append(" attempts\n").append(describe(id)).append('\n');
    for (java.lang.management.ThreadInfo t : java.lang.management.ManagementFactory.getThreadMXBean()
        .dumpAllThreads(true, true)) {
      b.append('"').append(t.getThreadName()).append("\" ").append(t.getThreadState());
      if (t.getLockName() != null) {
        b.append(" on ").append(t.getLockName());
      }
      if (t.getLockOwnerName() != null) {
        b.append(" owned by \"").append(t.getLockOwnerName()).append('"');
      }
      b.append('\n');
      for (StackTraceElement e : t.getStackTrace()) {
        b.append("    at ").append(e).append('\n');
      }
    }
    try {
      java.nio.file.Files.createDirectories(dir);
      java.nio.file.Files.writeString(dir.resolve("stuck-call-stacks.txt"), b);
    } catch (java.io.IOException e) {
      // diagnostics only
    }
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
    if (attempts == STACKS_AFTER && stacksDumped.compareAndSet(false, true)) {
      Thread t = new Thread(() -> dumpStacks(msgId), "chirper-stack-dump");
      t.setDaemon(true);
      t.start();
    }
    if (attempts != 1 && attempts != STACKS_AFTER) {
      return;
    }
    try {
      worker.execute(() -> {
        StringBuilder b = new StringBuilder("at ").append(Instant.now()).append(", after attempt ").append(attempts).append(" (to node ")
            .append(node).append(") failed (").append(reason).append("):\n").append(describe(msgId));
        synchronized (snapshots) {
          snapshots.merge(msgId, b.toString(), String::concat);
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
