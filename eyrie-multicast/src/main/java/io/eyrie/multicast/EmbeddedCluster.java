package io.eyrie.multicast;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A whole cluster in one JVM, on loopback ports, with on-disk storage in a directory of its
 * own: for tests, demos and benchmarks. Nodes can be killed and restarted on their storage.
 *
 * <pre>{@code
 * try (EmbeddedCluster c = EmbeddedCluster.newBuilder().nodes(3).partitions(4)
 *         .deliverers((g, cluster, codec) -> new MyDeliverer()).start();
 *      MulticastClient client = c.newClient()) {
 *   Object reply = client.multicast(Set.of(GroupId.valueOf("p0")), "hello").get();
 * }
 * }</pre>
 */
public final class EmbeddedCluster implements AutoCloseable {
  private final ClusterConfig cluster;
  private final Path storage;
  private final boolean deleteStorage;
  private final Deliverer.Factory apps;
  private final NodeOptions options;
  private final Path tlsDir;
  private final SortedMap<Integer, Node> nodes = new TreeMap<>();

  private EmbeddedCluster(Builder b, ClusterConfig cluster, Path storage) {
    this.cluster = cluster;
    this.storage = storage;
    this.deleteStorage = b.storage == null;
    this.apps = b.apps;
    this.options = b.options;
    this.tlsDir = b.tlsDir;
  }

  /** Returns a builder (3 nodes, 4 partitions, no oracle, every group on every node). */
  public static Builder newBuilder() {
    return new Builder();
  }

  /** Returns the cluster description (with the ports chosen at start). */
  public ClusterConfig cluster() {
    return cluster;
  }

  /** Returns the options every node runs with. */
  public NodeOptions options() {
    return options;
  }

  /** Returns the storage directory of a node. */
  public Path storageOf(int nodeId) {
    return storage.resolve("node-" + nodeId);
  }

  /**
   * Returns a running node.
   *
   * @param id the node id
   * @return the node
   * @throws IllegalStateException if the node is not running
   */
  public synchronized Node node(int id) {
    Node n = nodes.get(id);
    if (n == null) {
      throw new IllegalStateException("node " + id + " is not running");
    }
    return n;
  }

  /** Returns the running nodes by id. */
  public synchronized SortedMap<Integer, Node> runningNodes() {
    return new TreeMap<>(nodes);
  }

  /** Describes every running node's progress for diagnosis (see {@link Node#describe()}). */
  public String describe() {
    StringBuilder b = new StringBuilder();
    for (Node n : runningNodes().values()) {
      b.append(n.describe());
    }
    return b.toString();
  }

  /** Returns true if the node is running. */
  public synchronized boolean isRunning(int id) {
    return nodes.containsKey(id);
  }

  /** Stops a node abruptly-enough for tests: its storage stays, its memory state is lost. */
  public void kill(int id) {
    Node n;
    synchronized (this) {
      n = nodes.remove(id);
    }
    if (n != null) {
      // On a daemon thread too: closing makes Ratis start threads (see startOnDaemonThread).
      EmbeddedThreads.onDaemonThread("eyrie-embedded-stop-n" + id, () -> {
        n.close();
        return null;
      });
    }
  }

  /**
   * Starts a stopped node again on its storage.
   *
   * @param id the node id
   * @throws UncheckedIOException if it cannot start
   */
  public void restart(int id) {
    synchronized (this) {
      if (nodes.containsKey(id)) {
        throw new IllegalStateException("node " + id + " is running");
      }
    }
    Node n = startOnDaemonThread(id);
    synchronized (this) {
      nodes.put(id, n);
    }
  }

  /**
   * Starts a node from a daemon thread. Threads inherit daemon status from the thread that
   * creates them, and Ratis's and Netty's threads of a node are created while it starts (or by
   * its own threads later), so they are all daemons: a test or an application that fails after
   * {@link Builder#start()} without closing the cluster does not keep the JVM alive.
   */
  private Node startOnDaemonThread(int id) {
    NodeOptions o = tlsDir == null ? options : options.toBuilder().tls(TlsConfig.fromDir(tlsDir, "node-" + id)).build();
    return EmbeddedThreads.onDaemonThread("eyrie-embedded-start-n" + id, () -> Node.start(cluster, id, storageOf(id), apps, o));
  }

  /** Stops every node. */
  public void killAll() {
    for (int id : cluster.nodes().keySet()) {
      kill(id);
    }
  }

  /** Starts every stopped node. */
  public void restartAll() {
    for (int id : cluster.nodes().keySet()) {
      if (!isRunning(id)) {
        restart(id);
      }
    }
  }

  /** Returns the node whose replica leads the group, or 0 if no running node does. */
  public int leaderOf(GroupId g) {
    for (Node n : runningNodes().values()) {
      if (n.groups().contains(g) && n.isLeader(g)) {
        return n.id();
      }
    }
    return 0;
  }

  /**
   * Waits, for at most {@code timeout}, until every group is led by its preferred node (where
   * the nodes' leader balancing puts it) if that node runs; returns quietly when the time is up.
   * A cluster that has just started moves leaders within a second or two, and requests caught by
   * such a move wait for retries: tests and demos start after it.
   */
  public void awaitPreferredLeaders(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      boolean settled = true;
      for (GroupId g : cluster.groupIds()) {
        int preferred = io.eyrie.multicast.internal.transport.RatisSupport.preferredLeader(cluster, g);
        if (isRunning(preferred) && leaderOf(g) != preferred) {
          settled = false;
          break;
        }
      }
      if (settled) {
        return;
      }
      java.util.concurrent.locks.LockSupport.parkNanos(20_000_000L); // poll interval of a bounded wait
      if (Thread.currentThread().isInterrupted()) {
        return;
      }
    }
  }

  /**
   * Waits until every group has a leader among the running nodes.
   *
   * @param timeout how long to wait
   * @throws IllegalStateException on timeout
   */
  public void awaitLeaders(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      List<GroupId> leaderless = new ArrayList<>();
      for (GroupId g : cluster.groupIds()) {
        if (leaderOf(g) == 0) {
          leaderless.add(g);
        }
      }
      if (leaderless.isEmpty()) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("no leader within " + timeout + " for " + leaderless);
      }
      java.util.concurrent.locks.LockSupport.parkNanos(20_000_000L); // poll interval of a bounded wait
      if (Thread.currentThread().isInterrupted()) {
        throw new IllegalStateException("interrupted while waiting for leaders");
      }
    }
  }

  /**
   * Waits until every group answers a read-only query (a new leader serves linearizable reads
   * only once it has committed an entry of its term).
   */
  private void awaitAnswers(Object query, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    try (MulticastClient c = newClient()) {
      for (GroupId g : cluster.groups().keySet()) {
        while (true) {
          try {
            c.query(g, query).get(Math.max(1, (deadline - System.nanoTime()) / 1_000_000), TimeUnit.MILLISECONDS);
            break;
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + g, e);
          } catch (ExecutionException | TimeoutException e) {
            if (System.nanoTime() > deadline) {
              throw new IllegalStateException("group " + g + " answers no query after " + timeout, e);
            }
          }
        }
      }
    }
  }

  /**
   * Returns a client of this cluster with the cluster's codec registry; with {@link Builder#tls},
   * it connects as node 1 (a node may send everything).
   */
  public MulticastClient newClient() {
    return newClient(tlsDir == null ? null : TlsConfig.fromDir(tlsDir, "node-1"));
  }

  /**
   * Returns a client of this cluster with the cluster's codec registry, connecting with mutual
   * TLS as {@code tls}'s identity (null for plaintext).
   *
   * @param tls the client's TLS configuration, or null
   * @return the client
   */
  public MulticastClient newClient(TlsConfig tls) {
    return MulticastClient.newBuilder().cluster(cluster).registry(options.registry()).tls(tls).build();
  }

  @Override
  public void close() {
    killAll();
    if (deleteStorage) {
      EmbeddedThreads.deleteRecursively(storage);
    }
  }

  /** Builds and starts an {@link EmbeddedCluster}. */
  public static final class Builder {
    private int nodes = 3;
    private int partitions = 4;
    private boolean oracle;
    private int replication = 0;
    private Deliverer.Factory apps;
    private NodeApp app;
    private NodeOptions options = NodeOptions.defaults();
    private Path storage;
    private Path tlsDir;

    private Builder() {}

    /**
     * Runs each node's client port with mutual TLS, node N with {@code dir/node-N.pem} (the
     * files {@code eyrie certs --out dir --nodes 1,2,3} writes); default: plaintext. The
     * cluster's own clients ({@link EmbeddedCluster#newClient()}) connect as node 1.
     *
     * @param dir the certificates' directory, or null for plaintext
     * @return this builder
     */
    public Builder tls(Path dir) {
      this.tlsDir = dir;
      return this;
    }

    /** Sets the number of nodes (default 3). */
    public Builder nodes(int n) {
      if (n < 1) {
        throw new IllegalArgumentException("nodes must be positive: " + n);
      }
      this.nodes = n;
      return this;
    }

    /** Sets the number of partitions, named p0, p1, ... (default 4). */
    public Builder partitions(int k) {
      if (k < 0) {
        throw new IllegalArgumentException("partitions must not be negative: " + k);
      }
      this.partitions = k;
      return this;
    }

    /** Adds an oracle group named "oracle" (default: none). */
    public Builder oracle(boolean withOracle) {
      this.oracle = withOracle;
      return this;
    }

    /**
     * Sets the replicas per group (default: every node). Groups are spread round-robin over
     * the nodes.
     */
    public Builder replication(int r) {
      this.replication = r;
      return this;
    }

    /** Sets the deliverer factory (required). */
    public Builder deliverers(Deliverer.Factory f) {
      this.apps = f;
      return this;
    }

    /**
     * Sets the service the nodes host: its deliverers and its codec registrations (which replace
     * those of the {@link #options}). Replaces {@link #deliverers}.
     */
    public Builder app(NodeApp a) {
      this.app = Objects.requireNonNull(a, "app");
      this.apps = a.deliverers();
      return this;
    }

    /** Sets the node options. */
    public Builder options(NodeOptions o) {
      this.options = Objects.requireNonNull(o, "options");
      return this;
    }

    /** Sets the storage directory (default: a temporary directory deleted on close). */
    public Builder storage(Path dir) {
      this.storage = dir;
      return this;
    }

    /**
     * Starts the cluster and waits until every group has a leader.
     *
     * @return the running cluster
     */
    public EmbeddedCluster start() {
      Objects.requireNonNull(apps, "deliverers");
      if (app != null) {
        options = options.toBuilder().registry(app.registry()).roles(app::requiredRole).build();
      }
      try {
        Path dir = storage != null ? storage : Files.createTempDirectory("eyrie-cluster-");
        EmbeddedCluster c = new EmbeddedCluster(this, LoopbackLayout.of(nodes, partitions, oracle, replication), dir);
        try {
          c.restartAll();
          c.awaitLeaders(Duration.ofSeconds(60));
          c.awaitPreferredLeaders(Duration.ofSeconds(15));
          if (app != null && app.readinessQuery() != null) {
            c.awaitAnswers(app.readinessQuery(), Duration.ofSeconds(60));
          }
        } catch (RuntimeException e) {
          c.close();
          throw e;
        }
        return c;
      } catch (IOException e) {
        throw new UncheckedIOException("starting an embedded cluster", e);
      }
    }
  }
}
