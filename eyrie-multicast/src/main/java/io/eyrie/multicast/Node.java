package io.eyrie.multicast;

import io.eyrie.multicast.internal.replication.NodeChannels;
import io.eyrie.multicast.internal.replication.ReplyRouter;
import io.eyrie.multicast.internal.transport.ClientEndpoint;
import io.eyrie.multicast.internal.transport.RatisSupport;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Eyrie node: a JVM process (or, embedded, a part of one) hosting one Ratis server with a
 * replica of each of its groups, the group channels those replicas lead, and the client
 * endpoint.
 *
 * <p>A node keeps everything durable in its storage directory; a node started again on the
 * same directory recovers every group from its snapshot and log.
 *
 * <p>The client endpoint decodes each request's payload (and each query) with the node's
 * {@link Codec} when it admits it: bytes that do not decode, such as a declared size larger than
 * the bytes that follow, are answered with a {@code BAD_REQUEST} error at once and never reach a
 * log, where every replica would decode them again.
 *
 * <pre>{@code
 * ClusterConfig cluster = ClusterConfig.load(Path.of("cluster.conf"));
 * try (Node node = Node.start(cluster, 1, Path.of("data/n1"), (g, c, codec) -> new MyDeliverer(),
 *     NodeOptions.defaults())) {
 *   node.awaitClose();
 * }
 * }</pre>
 */
public final class Node implements AutoCloseable {
  static {
    // Before any Ratis server or client loads the shaded Netty's event loops, and before logging
    // starts (a logging configuration could touch the common pool).
    RatisSupport.configureJvm();
    LogDefaults.apply(); // before Ratis or Netty log anything
  }

  private static final Logger LOG = LoggerFactory.getLogger(Node.class);

  /**
   * Prepares this JVM for Eyrie: sets, unless already set, the properties that Ratis's shaded
   * Netty and the JDK read once when their classes load (event-loop threads; on a machine with at
   * most two cores, the common fork-join pool's parallelism, without which every async task of
   * {@code CompletableFuture} starts a thread: Ratis runs one per appendEntries). Loading this
   * class does it; an application that uses {@code CompletableFuture} or a fork-join pool before
   * it starts a node should call this first thing in {@code main}, or pass {@code
   * -Djava.util.concurrent.ForkJoinPool.common.parallelism=2}.
   *
   * @return true if async tasks of {@code CompletableFuture} run on the common pool in this JVM
   *     (false: it was initialised too early, and a warning was logged)
   */
  public static boolean prepareJvm() {
    RatisSupport.configureJvm();
    return RatisSupport.asyncTasksPooled();
  }

  // A node is its parts: GroupHost (the Ratis server, the hosted groups and the cluster as this
  // node knows it), NodeChannels (what it writes to groups' logs), LeaderBalancer (where its
  // groups' leaders go), NodeRequestHandler (the endpoint's answers) and NodeDiagnostics.
  private final int nodeId;
  private final Codec codec;
  /** Set by {@link #handOffLeadership} and {@link #close}: no more leader balancing or added groups. */
  private volatile boolean stopping;
  private final GroupHost host;
  private final NodeChannels channels;
  private final LeaderBalancer leaders;
  private final NodeDiagnostics diagnostics;
  private final ClientEndpoint endpoint;
  private final CompletableFuture<Void> closed = new CompletableFuture<>();
  private volatile RequestListener requestListener = (replyGroup, destinations, nanos, ok) -> {};

  /** Told of each client multicast this node's endpoint answered (for metrics). */
  @FunctionalInterface
  public interface RequestListener {
    /**
     * A multicast was answered.
     *
     * @param replyGroup the group that replied
     * @param destinations how many groups it was addressed to
     * @param nanos from the request's arrival to the reply
     * @param ok false if it failed or timed out here
     */
    void answered(GroupId replyGroup, int destinations, long nanos, boolean ok);
  }

  private Node(ClusterConfig cluster, int nodeId, Path storage, Deliverer.Factory apps, NodeOptions options)
      throws IOException {
    this.nodeId = nodeId;
    refuseInsecure(cluster, nodeId, options);
    this.codec = new Codec(options.registry());
    this.host = new GroupHost(cluster, nodeId, storage, apps, options, codec, () -> stopping);
    cluster = host.cluster();
    ClusterConfig.NodeInfo self = cluster.node(nodeId);
    List<GroupId> local = cluster.groupsOf(nodeId);
    this.channels = new NodeChannels(cluster, nodeId, codec, options, host::machine);
    channels.onSubmitFailure((group, start, t) -> {
      ReplyRouter r = host.router(start.replyGroup());
      if (r == null) {
        return;
      }
      if (group.equals(start.replyGroup())) {
        // The client hears at once and resends, perhaps through another node.
        r.fail(start.id(), t);
      } else if (r.isWaiting(start.id())) {
        // The reply group has (or will have) the message, undecided until this destination
        // proposes: without the start here it would wait for the client's next attempt (3 s by
        // default). Submit it again while a client still waits for the reply; groups drop
        // duplicate starts.
        channels.resubmitLater(group, start);
      }
    });
    this.leaders = new LeaderBalancer(nodeId, host, channels::isLeader, () -> stopping);
    this.diagnostics = new NodeDiagnostics(nodeId, host, channels);
    try {
      host.start(channels);
      this.endpoint = ClientEndpoint.start(self.host(), self.clientPort(), codec,
          new NodeRequestHandler(nodeId, codec, host, channels, () -> requestListener, options.roles(), options.tls()),
          ClientEndpoint.Limits.of(options), options.tls(), options.tlsHandshakeTimeoutMs());
      channels.start();
      leaders.start();
    } catch (IOException | RuntimeException e) {
      closeQuietly();
      throw e;
    }
    LOG.info("node {} started: groups {}, raft {}:{}, client {} ({})", nodeId, local, self.host(), self.raftPort(),
        self.clientPort(), options.tls() == null ? "plaintext" : "mutual TLS as " + options.tls().identity());
  }

  /**
   * Refuses to start a node without TLS on an address that is not loopback, unless it is told
   * {@link NodeOptions#insecure()}: anyone who reaches such a port could send anything.
   */
  private static void refuseInsecure(ClusterConfig cluster, int nodeId, NodeOptions options) {
    if (options.tls() != null || options.insecure()) {
      return;
    }
    String address = cluster.node(nodeId).host();
    if (!isLoopback(address)) {
      throw new IllegalArgumentException("node " + nodeId + " listens on " + address
          + ", which is not loopback, without TLS: add a 'tls DIR' line to the cluster file (certificates from"
          + " eyrie certs), or start it with --insecure (NodeOptions.insecure) on a network you trust");
    }
  }

  /** True if every address the host name resolves to is a loopback address. */
  static boolean isLoopback(String host) {
    try {
      java.net.InetAddress[] all = java.net.InetAddress.getAllByName(host);
      for (java.net.InetAddress a : all) {
        if (!a.isLoopbackAddress()) {
          return false;
        }
      }
      return all.length > 0;
    } catch (java.net.UnknownHostException e) {
      return false;
    }
  }

  /**
   * Starts a node.
   *
   * @param cluster the cluster
   * @param nodeId this node's id in the cluster
   * @param storage the directory holding this node's logs and snapshots (created if missing)
   * @param apps creates the deliverer of each hosted group
   * @param options tunables
   * @return the running node
   * @throws IOException if the server cannot start (a port in use, unreadable storage)
   */
  public static Node start(ClusterConfig cluster, int nodeId, Path storage, Deliverer.Factory apps,
      NodeOptions options) throws IOException {
    return new Node(cluster, nodeId, storage, apps, options);
  }

  /**
   * Starts a node hosting a service: its deliverers, with its codec registrations (which replace
   * those of {@code options}).
   *
   * @param cluster the cluster
   * @param nodeId this node's id in the cluster
   * @param storage the directory holding this node's logs and snapshots (created if missing)
   * @param app the service
   * @param options tunables
   * @return the running node
   * @throws IOException if the server cannot start (a port in use, unreadable storage)
   */
  public static Node start(ClusterConfig cluster, int nodeId, Path storage, NodeApp app, NodeOptions options)
      throws IOException {
    return new Node(cluster, nodeId, storage, app.deliverers(),
        options.toBuilder().registry(app.registry()).roles(app::requiredRole).build());
  }

  /** Returns this node's id. */
  public int id() {
    return nodeId;
  }

  /**
   * Returns the cluster as this node knows it: its cluster file's configuration with the groups
   * added to the running cluster since (see {@link ClusterAdmin#addGroup}).
   */
  public ClusterConfig cluster() {
    return host.cluster();
  }

  /** Returns true if clients may name the group (a group being added is not open yet). */
  public boolean isOpen(GroupId g) {
    return host.isOpen(g);
  }

  /** Returns the codec of this node. */
  public Codec codec() {
    return codec;
  }

  /** Returns the groups hosted here (a group added to the cluster once its replica here runs). */
  public List<GroupId> groups() {
    return host.groups();
  }

  /** Returns what the client endpoint's connection limits did since the node started (see {@link NodeOptions}). */
  public NodeStats.Endpoint endpointStats() {
    return endpoint.stats();
  }

  /** Returns what the Raft port refused since the node started: frames over its limit, and TLS handshakes. */
  public NodeStats.RaftPort raftPortStats() {
    return new NodeStats.RaftPort(host.raftPort.frameRefusals(), host.raftPort.tlsRefusals());
  }

  /** Returns true if this node's replica currently leads the group. */
  public boolean isLeader(GroupId g) {
    return channels.isLeader(g);
  }

  /**
   * Runs a read-only function on the local replica of a group, under the replica's lock, with
   * the replica's current deliverer (which is replaced when a snapshot is installed).
   *
   * @param g a hosted group
   * @param f the function
   * @param <T> its result type
   * @return its result
   */
  public <T> T inspect(GroupId g, Function<Deliverer, T> f) {
    return host.machine(g).read(s -> f.apply(s.app()));
  }

  /**
   * Returns counters of the local replica of a group.
   *
   * @param g a hosted group
   * @return the counters
   */
  public NodeStats.Group stats(GroupId g) {
    return diagnostics.stats(g);
  }

  /**
   * Describes this node's progress for diagnosis (an operator's or a test's dump when something
   * seems stuck): per hosted group, the oldest pending and queued messages, what the head of the
   * execution queue waits for, channel positions, and the state of the channel senders and
   * submitters. The format is for people and may change.
   *
   * @return a multi-line description
   */
  public String describe() {
    return diagnostics.describe();
  }

  /**
   * Describes what each hosted group's replica knows of one message (for diagnosis).
   *
   * @param id the message
   * @return one line per hosted group
   */
  public String describe(MsgId id) {
    return diagnostics.describe(id);
  }

  /**
   * Returns what this node's Raft server knows of a hosted group, without asking other nodes:
   * the leader it follows (0 if none known), the current term, and this replica's indexes. A
   * replica is caught up when {@code status.lag(status.replicas().get(0)) == 0}.
   *
   * @param g a hosted group
   * @return a status whose only replica is this one
   */
  public GroupStatus localStatus(GroupId g) {
    return diagnostics.localStatus(g);
  }

  /**
   * Sets the listener told of each client multicast this node answers (one at a time; it runs
   * on the endpoint's threads, so it must be quick).
   *
   * @param l the listener
   */
  public void setRequestListener(RequestListener l) {
    this.requestListener = Objects.requireNonNull(l, "listener");
  }

  /** Returns the counters of this node's submitters and channel senders. */
  public NodeStats.Traffic traffic() {
    return channels.traffic();
  }

  /**
   * Hands off the leadership of every group this node leads to another member, before a
   * planned shutdown: otherwise each of those groups waits out an election timeout. Ratis
   * transfers leadership once the chosen follower's log has caught up; a follower that does not
   * answer in time is skipped for the next. Best effort: a group whose transfer did not finish
   * in time elects a leader the ordinary way after {@link #close()}.
   *
   * @param timeout how long to wait for each attempt
   * @return the groups this node led and no longer leads (handed off, or stepped down when no
   *     other member could take over)
   */
  public List<GroupId> handOffLeadership(Duration timeout) {
    stopping = true;
    return leaders.handOff(timeout);
  }

  /** Blocks until {@link #close()} has been called (for a node's main thread). */
  public void awaitClose() throws InterruptedException {
    try {
      closed.get();
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    closeQuietly();
    closed.complete(null);
  }

  private void closeQuietly() {
    stopping = true;
    leaders.close();
    host.stopAddingGroups();
    try {
      if (endpoint != null) {
        endpoint.close();
      }
    } catch (RuntimeException e) {
      LOG.warn("node {}: closing the endpoint: {}", nodeId, e.toString());
    }
    channels.close();
    host.close();
  }
}
