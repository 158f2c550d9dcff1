package io.eyrie.multicast;

import io.eyrie.multicast.internal.ClientEndpoint;
import io.eyrie.multicast.internal.GroupState;
import io.eyrie.multicast.internal.GroupStateMachine;
import io.eyrie.multicast.internal.NodeChannels;
import io.eyrie.multicast.internal.RatisSupport;
import io.eyrie.multicast.internal.ReplyRouter;
import io.eyrie.multicast.internal.RequestHandler;
import io.eyrie.multicast.internal.Wire;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupManagementRequest;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
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

  /** The cluster file's configuration with the groups added to the running cluster since. */
  private volatile ClusterConfig cluster;
  /** The groups clients may name: the cluster file's, and added ones once opened. */
  private final java.util.Set<GroupId> open = ConcurrentHashMap.newKeySet();
  /** The groups of the cluster file (open from the start everywhere). */
  private final java.util.Set<GroupId> fileGroups;
  /**
   * The cluster file's configuration: the replicated state every replica of a cluster file's
   * group starts from (review N1). Groups added since enter a replica's state only through its
   * log or a snapshot, never through what this node learned before it restarted.
   */
  private final ClusterConfig fileCluster;
  /**
   * For each added group this node knows: the added groups (itself included) that its replicas
   * start knowing besides the cluster file's, as every destination of its group change knew
   * them right after delivering it. Recorded with the added groups.
   */
  private final Map<GroupId, java.util.Set<GroupId>> initialKnown = new ConcurrentHashMap<>();
  /** What {@link GroupState.Listener#groupKnown} reported, until {@link #learn} records it. */
  private final Map<GroupId, java.util.Set<GroupId>> knownAtDelivery = new ConcurrentHashMap<>();
  private final Path storage;
  private final DelivererFactory apps;
  private final int nodeId;
  private final NodeOptions options;
  private final Codec codec;
  private final SortedMap<GroupId, GroupStateMachine> machines = Collections.synchronizedSortedMap(new TreeMap<>());
  private final Map<GroupId, ReplyRouter> routers = new ConcurrentHashMap<>();
  private final NodeChannels channels;
  private final RaftServer server;
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

  private Node(ClusterConfig cluster, int nodeId, Path storage, DelivererFactory apps, NodeOptions options)
      throws IOException {
    this.nodeId = nodeId;
    this.options = options;
    this.storage = storage;
    this.apps = apps;
    this.codec = new Codec(options.registry());
    open.addAll(cluster.groupIds());
    this.fileGroups = java.util.Set.copyOf(cluster.groupIds());
    this.fileCluster = cluster;
    Files.createDirectories(storage);
    this.cluster = AddedGroups.load(storage, cluster, open, initialKnown);
    cluster = this.cluster;
    ClusterConfig.NodeInfo self = cluster.node(nodeId);
    List<GroupId> local = cluster.groupsOf(nodeId);
    this.channels = new NodeChannels(cluster, nodeId, codec, options, this::machine);
    for (GroupId g : local) {
      routers.put(g, new ReplyRouter());
    }
    channels.onSubmitFailure((group, start, t) -> {
      ReplyRouter r = routers.get(start.replyGroup());
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
    Function<RaftGroupId, GroupStateMachine> registry = this::newMachine;
    this.server = RaftServer.newBuilder()
        .setServerId(RatisSupport.peerId(nodeId))
        .setProperties(RatisSupport.serverProperties(self, storage.toFile(), options))
        .setStateMachineRegistry(registry::apply)
        .build();
    try {
      server.start();
      java.util.Set<RaftGroupId> existing = new java.util.HashSet<>();
      server.getGroupIds().forEach(existing::add);
      for (GroupId g : local) {
        RaftGroupId rgid = RatisSupport.raftGroupId(g);
        if (!existing.contains(rgid)) {
          RaftClientReply r = server.groupManagement(GroupManagementRequest.newAdd(ClientId.randomId(),
              RatisSupport.peerId(nodeId), 0, RatisSupport.raftGroup(cluster, g)));
          if (!r.isSuccess()) {
            throw new IOException("cannot add group " + g + ": " + r.getException());
          }
        }
      }
      for (GroupId g : local) {
        channels.attach(g, server.getDivision(RatisSupport.raftGroupId(g)));
        hosted.add(g);
      }
      this.endpoint = ClientEndpoint.start(self.host(), self.clientPort(), codec, new Handler(), options.maxFrameBytes());
      channels.start();
      balancer.scheduleWithFixedDelay(this::balanceLeaders, 1, 1, java.util.concurrent.TimeUnit.SECONDS);
    } catch (IOException | RuntimeException e) {
      closeQuietly();
      throw e;
    }
    LOG.info("node {} started: groups {}, raft {}:{}, client {}", nodeId, local, self.host(), self.raftPort(),
        self.clientPort());
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
  public static Node start(ClusterConfig cluster, int nodeId, Path storage, DelivererFactory apps,
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
    return new Node(cluster, nodeId, storage, app.deliverers(), options.toBuilder().registry(app.registry()).build());
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
    return cluster;
  }

  /** Returns true if clients may name the group (a group being added is not open yet). */
  public boolean isOpen(GroupId g) {
    return open.contains(g);
  }

  /** Returns the codec of this node. */
  public Codec codec() {
    return codec;
  }

  /** Returns the groups hosted here (a group added to the cluster once its replica here runs). */
  public List<GroupId> groups() {
    return List.copyOf(hosted);
  }

  private final java.util.concurrent.CopyOnWriteArrayList<GroupId> hosted = new java.util.concurrent.CopyOnWriteArrayList<>();

  /** Creates the state machine of a hosted group (Ratis's state machine registry). */
  private GroupStateMachine newMachine(RaftGroupId rgid) {
    ClusterConfig c = cluster;
    GroupId g = null;
    for (GroupId x : c.groupsOf(nodeId)) {
      if (RatisSupport.raftGroupId(x).equals(rgid)) {
        g = x;
      }
    }
    if (g == null) {
      throw new IllegalStateException("node " + nodeId + " does not host Ratis group " + rgid);
    }
    GroupId group = g;
    routers.putIfAbsent(group, new ReplyRouter());
    // A replica's initial state is the same at every replica of its group, whatever this node
    // learned before it (re)started: a cluster file's group starts from the cluster file's
    // groups, all open; an added group from those and the added groups its replicas were
    // created knowing (not open). Its log (or snapshot) makes the groups added since known and
    // open again, as it did the first time (review N1).
    ClusterConfig initial = initialCluster(fileCluster, group, c, initialKnown.get(group));
    if (!fileGroups.contains(group) && !initialKnown.containsKey(group)) {
      LOG.warn("node {}: no record of what added group {} started knowing (recorded by an older version): its"
          + " replica starts knowing every group this node knows", nodeId, group);
    }
    GroupStateMachine sm = GroupStateMachine.create(group, initial, fileGroups, codec, apps,
        options.clientExpiryMs(), channels::leaderChanged);
    sm.setListener(new GroupState.Listener() {
      @Override
      public void reply(MsgId id, GroupState.Reply reply) {
        routers.get(group).complete(id, reply);
      }

      @Override
      public void outboxChanged(GroupId to) {
        channels.outboxChanged(group, to);
      }

      @Override
      public void membershipChanged(SortedMap<GroupId, ClusterConfig.GroupInfo> known, java.util.Set<GroupId> opened) {
        learn(known, opened);
      }

      @Override
      public void groupKnown(ClusterConfig.GroupInfo added, java.util.Set<GroupId> knownThen) {
        if (!initialKnown.containsKey(added.id())) { // not a replay of a change learned before
          knownAtDelivery.putIfAbsent(added.id(), addedOnly(knownThen));
        }
      }
    });
    machines.put(group, sm);
    return sm;
  }

  /**
   * The cluster a replica of {@code g} starts from: for a group of the cluster file, the cluster
   * file's configuration; for an added group, that with the added groups {@code since} (whose
   * members {@code learned} gives) and {@code g} itself. Without a record ({@code since} null,
   * from an older version), every group of {@code learned}.
   */
  static ClusterConfig initialCluster(ClusterConfig file, GroupId g, ClusterConfig learned,
      java.util.Set<GroupId> since) {
    if (file.groups().containsKey(g)) {
      return file;
    }
    if (since == null) {
      return learned;
    }
    ClusterConfig out = file;
    for (GroupId x : new java.util.TreeSet<>(since)) {
      ClusterConfig.GroupInfo info = learned.groups().get(x);
      if (info != null) {
        out = out.withGroup(info);
      }
    }
    return out.withGroup(learned.group(g));
  }

  /** The groups of {@code groups} not in the cluster file. */
  private java.util.Set<GroupId> addedOnly(java.util.Collection<GroupId> groups) {
    java.util.TreeSet<GroupId> out = new java.util.TreeSet<>(groups);
    out.removeAll(fileGroups);
    return java.util.Set.copyOf(out);
  }

  /**
   * Learns what a hosted replica delivered about groups added to the running cluster: a group
   * becomes known here (channel senders towards it; a replica of it if this node is a member,
   * created off the apply thread), then open (clients may name it). Remembered in the storage
   * directory, so that Ratis finds the added groups' state machines after a restart.
   */
  private synchronized void learn(SortedMap<GroupId, ClusterConfig.GroupInfo> known, java.util.Set<GroupId> opened) {
    boolean changed = false;
    for (ClusterConfig.GroupInfo g : known.values()) {
      if (cluster.groups().containsKey(g.id()) || g.members().isEmpty()) {
        continue;
      }
      try {
        cluster = cluster.withGroup(g);
      } catch (IllegalArgumentException e) {
        LOG.error("node {}: cannot learn group {}: {}", nodeId, g, e.getMessage());
        continue;
      }
      changed = true;
      // What its replicas start knowing: as its group change's destinations knew it right after
      // delivering it. A node that learns the group from a snapshot did not see that point and
      // takes what the snapshot knows (the same unless a later group was added before it).
      java.util.Set<GroupId> since = knownAtDelivery.remove(g.id());
      initialKnown.putIfAbsent(g.id(), since != null ? since : addedOnly(known.keySet()));
      channels.learn(cluster, g.id());
      LOG.info("node {}: learned group {} on nodes {}", nodeId, g.id(), g.members());
      if (g.members().contains(nodeId)) {
        routers.putIfAbsent(g.id(), new ReplyRouter());
        groupAdder.execute(() -> host(g.id()));
      }
    }
    for (GroupId g : opened) {
      if (cluster.groups().containsKey(g) && open.add(g)) {
        changed = true;
        LOG.info("node {}: group {} is open", nodeId, g);
      }
    }
    if (changed) {
      try {
        AddedGroups.save(storage, cluster, fileGroups, open, initialKnown);
      } catch (IOException e) {
        LOG.error("node {}: cannot save the added groups: {}", nodeId, e.toString());
      }
    }
  }

  private final java.util.concurrent.ExecutorService groupAdder = java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "eyrie-group-add");
    t.setDaemon(true);
    return t;
  });

  /** Creates this node's replica of an added group, unless it has one (Ratis's group add). */
  private void host(GroupId g) {
    if (stopping || hosted.contains(g)) {
      return;
    }
    RaftGroupId rgid = RatisSupport.raftGroupId(g);
    try {
      boolean exists = false;
      for (RaftGroupId x : server.getGroupIds()) {
        exists |= x.equals(rgid);
      }
      if (!exists) {
        RaftClientReply r = server.groupManagement(GroupManagementRequest.newAdd(ClientId.randomId(),
            RatisSupport.peerId(nodeId), 0, RatisSupport.raftGroup(cluster, g)));
        if (!r.isSuccess()) {
          throw new IOException(String.valueOf(r.getException()));
        }
      }
      channels.attach(g, server.getDivision(rgid));
      hosted.add(g);
      LOG.info("node {}: hosts added group {}", nodeId, g);
    } catch (IOException | RuntimeException e) {
      LOG.error("node {}: cannot create its replica of added group {}: {}", nodeId, g, e.toString());
    }
  }

  private GroupStateMachine machine(GroupId g) {
    GroupStateMachine sm = machines.get(g);
    if (sm == null) {
      throw new IllegalArgumentException("node " + nodeId + " does not host group " + g);
    }
    return sm;
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
    return machine(g).read(s -> f.apply(s.app()));
  }

  /**
   * Returns counters of the local replica of a group.
   *
   * @param g a hosted group
   * @return the counters
   */
  public GroupStats stats(GroupId g) {
    GroupStateMachine sm = machine(g);
    return sm.read(s -> {
      GroupState.Stats st = s.stats();
      return new GroupStats(st.entries, st.delivered, st.deliveredMulti, st.executed, st.parks, st.duplicates,
          st.itemsSent, st.itemsReceived, s.pendingCount(), s.queuedCount(), sm.snapshotsTaken(),
          sm.snapshotsLoaded(), sm.snapshotsInstalled());
    });
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
    StringBuilder b = new StringBuilder("node ").append(nodeId).append('\n');
    for (GroupId g : groups()) {
      GroupStateMachine sm = machines.get(g);
      if (sm != null) {
        b.append(sm.<String>read(s -> s.describe()));
      }
    }
    b.append(channels.describe());
    return b.toString();
  }

  /**
   * Describes what each hosted group's replica knows of one message (for diagnosis).
   *
   * @param id the message
   * @return one line per hosted group
   */
  public String describe(MsgId id) {
    StringBuilder b = new StringBuilder();
    for (GroupId g : groups()) {
      GroupStateMachine sm = machines.get(g);
      if (sm != null) {
        ReplyRouter r = routers.get(g);
        b.append("node ").append(nodeId).append(' ').append(sm.<String>read(s -> s.describe(id)))
            .append(r != null && r.isWaiting(id) ? " (a request waits here)" : "").append('\n');
      }
    }
    String sub = channels.describe(id);
    if (!sub.isEmpty()) {
      b.append("node ").append(nodeId).append(sub).append('\n');
    }
    return b.toString();
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
    machine(g);
    try {
      RaftServer.Division d = server.getDivision(RatisSupport.raftGroupId(g));
      var info = d.getInfo();
      int leader = info.getLeaderId() == null ? 0 : RatisSupport.nodeId(info.getLeaderId());
      var snapshot = d.getStateMachine().getLatestSnapshot();
      var last = d.getRaftLog().getLastEntryTermIndex();
      GroupStatus.Replica r = new GroupStatus.Replica(nodeId, true, info.getCurrentRole().name(),
          d.getRaftLog().getLastCommittedIndex(), info.getLastAppliedIndex(), last == null ? 0 : last.getIndex(),
          snapshot == null ? -1 : snapshot.getIndex());
      return new GroupStatus(g, GroupStatus.raftGroupIdOf(g), leader, leader == 0 ? 0 : info.getCurrentTerm(),
          List.of(r));
    } catch (IOException e) {
      return new GroupStatus(g, GroupStatus.raftGroupIdOf(g), 0, 0,
          List.of(new GroupStatus.Replica(nodeId, false, "UNREACHABLE", 0, 0, 0, -1)));
    }
  }

  /**
   * Sets the listener told of each client multicast this node answers (one at a time; it runs
   * on the endpoint's threads, so it must be quick).
   *
   * @param l the listener
   */
  public void setRequestListener(RequestListener l) {
    this.requestListener = java.util.Objects.requireNonNull(l, "listener");
  }

  /** Returns the counters of this node's submitters and channel senders. */
  public NodeTraffic traffic() {
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
  public List<GroupId> handOffLeadership(java.time.Duration timeout) {
    stopping = true;
    List<GroupId> led = new java.util.ArrayList<>();
    for (GroupId g : groups()) {
      if (isLeader(g)) {
        led.add(g);
      }
    }
    List<CompletableFuture<Boolean>> moves = new java.util.ArrayList<>();
    for (GroupId g : led) {
      // A thread each, not the common pool: a transfer blocks for up to its timeout, and Ratis
      // runs its followers' appendEntries on that pool (2 workers on 2 cores), which a transfer
      // may need in this JVM (embedded clusters).
      moves.add(CompletableFuture.supplyAsync(() -> transfer(g, timeout), r -> {
        Thread t = new Thread(r, "eyrie-handoff-" + g.name());
        t.setDaemon(true);
        t.start();
      }));
    }
    List<GroupId> moved = new java.util.ArrayList<>();
    for (int i = 0; i < led.size(); i++) {
      if (moves.get(i).join()) {
        moved.add(led.get(i));
      }
    }
    return moved;
  }

  private boolean transfer(GroupId g, java.time.Duration timeout) {
    List<Integer> members = cluster.group(g).members();
    int self = members.indexOf(nodeId);
    // Members after this one first, in ring order, so that handoffs from different nodes spread.
    for (int k = 1; k < members.size(); k++) {
      int to = members.get((self + k) % members.size());
      try {
        RaftClientReply r = server.transferLeadership(new org.apache.ratis.protocol.TransferLeadershipRequest(
            ClientId.randomId(), RatisSupport.peerId(nodeId), RatisSupport.raftGroupId(g), 0,
            RatisSupport.peerId(to), timeout.toMillis()));
        if (r.isSuccess()) {
          LOG.info("node {}: handed the leadership of {} to node {}", nodeId, g, to);
          return true;
        }
        LOG.info("node {}: node {} did not take the leadership of {}: {}", nodeId, to, g, r.getException());
      } catch (IOException | RuntimeException e) {
        LOG.info("node {}: node {} did not take the leadership of {}: {}", nodeId, to, g, e.toString());
      }
      if (!isLeader(g)) {
        return true;
      }
    }
    return false;
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

  /*
   * Leaders spread over the nodes: each group has a preferred node (RatisSupport.preferredLeader,
   * rotated by group), and a node that leads a group preferred elsewhere hands it over, at once
   * after start-up, and once a preferred node that was silent for a while (down, restarted,
   * started late) has kept up for {@link #HAND_BACK_SETTLE_NANOS}. Done with Ratis's
   * leadership transfer rather than Ratis priorities: with priorities, Ratis refuses to transfer
   * leadership to a lower-priority member, which a node shutting down must be able to do.
   */
  private final java.util.concurrent.ScheduledExecutorService balancer =
      java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "eyrie-leader-balance");
        t.setDaemon(true);
        return t;
      });
  private final Map<GroupId, Long> nextBalance = new ConcurrentHashMap<>();
  private volatile boolean stopping;

  private void balanceLeaders() {
    for (GroupId g : groups()) {
      int preferred = RatisSupport.preferredLeader(cluster, g);
      long now = System.nanoTime();
      if (!stopping && preferred != nodeId && !isLeader(g)) {
        absentSince.remove(g); // what this node saw as leader no longer holds
      }
      if (stopping || preferred == nodeId || !isLeader(g) || now < nextBalance.getOrDefault(g, 0L)) {
        continue;
      }
      if (!readyToLead(g, preferred, now)) {
        continue;
      }
      try {
        RaftClientReply r = server.transferLeadership(new org.apache.ratis.protocol.TransferLeadershipRequest(
            ClientId.randomId(), RatisSupport.peerId(nodeId), RatisSupport.raftGroupId(g), 0,
            RatisSupport.peerId(preferred), 3000));
        if (r.isSuccess()) {
          LOG.info("node {}: handed the leadership of {} to its preferred node {}", nodeId, g, preferred);
          absentSince.remove(g);
          continue;
        }
      } catch (IOException | RuntimeException e) {
        LOG.debug("node {}: node {} did not take the leadership of {}: {}", nodeId, preferred, g, e.toString());
      }
      // The preferred node is down or behind: try again later, not on every tick.
      nextBalance.put(g, now + 10_000_000_000L);
    }
  }

  /** How far behind the leader's applied index a follower may be and still take the leadership. */
  static final long TRANSFER_LAG_ENTRIES = 64;
  /** How recently the leader must have heard from a follower that takes the leadership. */
  static final long TRANSFER_SILENCE_MS = 500;
  /** A follower silent this long is taken for down (restarted, or cut off) until it keeps up again. */
  static final long ABSENT_SILENCE_MS = 3000;
  /**
   * How long a preferred node that was down must have kept up before it gets the leadership back.
   * Handed back seconds after its JVM started, it served its groups slowly: the failover runs of
   * 2026-11-25 saw about 3 s without answers right after the hand-back
   * (bench/results/HISTORY.md).
   */
  static final long HAND_BACK_SETTLE_NANOS = 10_000_000_000L;

  /**
   * For each group this node leads whose preferred node was seen down: since when (nanoTime) it
   * has kept up again, or {@code Long.MIN_VALUE} while it has not.
   */
  private final Map<GroupId, Long> absentSince = new ConcurrentHashMap<>();

  /**
   * True if the preferred node {@code to} may take the leadership of {@code g} now: it answered
   * recently and has nearly every entry this leader applied (a transfer to a node that is behind,
   * just restarted, replaying or installing a snapshot, holds the group's writes until it catches
   * up or the transfer times out), and, if this leader saw it silent for {@link #ABSENT_SILENCE_MS}
   * (down, restarted, or started well after the others: in each case a cold JVM), it first caught
   * up at least {@link #HAND_BACK_SETTLE_NANOS} ago. Reads the leader's view of its followers (Ratis lists the
   * followers' match indices and their RPC info in the same order).
   */
  private boolean readyToLead(GroupId g, int to, long now) {
    long silenceMs;
    boolean caughtUp;
    try {
      org.apache.ratis.server.RaftServer.Division d = server.getDivision(RatisSupport.raftGroupId(g));
      org.apache.ratis.server.DivisionInfo info = d.getInfo();
      if (!info.isLeader()) {
        return false;
      }
      long[] match = info.getFollowerMatchIndices();
      var followers = info.getRoleInfoProto().getLeaderInfo().getFollowerInfoList();
      long applied = info.getLastAppliedIndex();
      int i = 0;
      while (i < followers.size() && i < match.length
          && RatisSupport.nodeId(org.apache.ratis.protocol.RaftPeerId.valueOf(followers.get(i).getId().getId())) != to) {
        i++;
      }
      if (i == followers.size() || i == match.length) {
        return false;
      }
      silenceMs = followers.get(i).getLastRpcElapsedTimeMs();
      caughtUp = silenceMs <= TRANSFER_SILENCE_MS && match[i] >= applied - TRANSFER_LAG_ENTRIES;
    } catch (IOException | RuntimeException e) {
      return false;
    }
    if (silenceMs >= ABSENT_SILENCE_MS) {
      absentSince.put(g, Long.MIN_VALUE);
    }
    if (!caughtUp) {
      // A slow answer or a short lag under load does not restart the settle time: only an absence does.
      return false;
    }
    Long since = absentSince.computeIfPresent(g, (k, v) -> v == Long.MIN_VALUE ? now : v);
    return since == null || now - since >= HAND_BACK_SETTLE_NANOS;
  }

  private void closeQuietly() {
    stopping = true;
    balancer.shutdownNow();
    groupAdder.shutdownNow();
    try {
      if (endpoint != null) {
        endpoint.close();
      }
    } catch (RuntimeException e) {
      LOG.warn("node {}: closing the endpoint: {}", nodeId, e.toString());
    }
    channels.close();
    try {
      if (server != null) {
        server.close();
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("node {}: closing the Ratis server: {}", nodeId, e.toString());
    }
    routers.values().forEach(ReplyRouter::failAll);
  }

  private final class Handler implements RequestHandler {
    @Override
    public CompletableFuture<Wire.ClientReply> multicast(Wire.ClientRequest request) {
      Wire.Start s = request.start();
      if (s == null || s.id() == null || s.dests() == null || s.replyGroup() == null || s.payload() == null) {
        return CompletableFuture.completedFuture(error(GroupState.BAD_REQUEST, "incomplete request", 0));
      }
      ReplyRouter router = routers.get(s.replyGroup());
      if (router == null) {
        return CompletableFuture.completedFuture(error(GroupState.BAD_REQUEST,
            "node " + nodeId + " does not host reply group " + s.replyGroup(), channels.leaderHint(s.replyGroup())));
      }
      for (GroupId d : s.dests()) {
        if (d == null || !cluster.groups().containsKey(d)) {
          return CompletableFuture.completedFuture(error(GroupState.BAD_REQUEST, "unknown group " + d, 0));
        }
        if (!open.contains(d) && !opens(s, d)) {
          // Being added: every group must know it before clients may name it. Try again.
          return CompletableFuture.completedFuture(error(GroupState.UNAVAILABLE,
              "group " + d + " is being added to the cluster and not open yet", 0));
        }
      }
      if (Arrays.binarySearch(s.dests(), s.replyGroup()) < 0) {
        return CompletableFuture.completedFuture(error(GroupState.BAD_REQUEST, "reply group is not a destination", 0));
      }
      // Every replica decodes the payload when it applies the message; bytes that cannot decode
      // (hostile declared sizes included) are refused here, before they reach any log.
      String malformed = malformed(s.payload());
      if (malformed != null) {
        return CompletableFuture.completedFuture(error(GroupState.BAD_REQUEST, "malformed payload: " + malformed, 0));
      }
      // A request for the same message already waiting here means this node submitted it and
      // the reply group has not refused it (a failed submission fails the waiting request): a
      // prompt resend only waits for the same reply instead of adding duplicate entries to the
      // logs. A resend long after the submission submits again (see ReplyRouter.join): the
      // local replica may have skipped the entry, and the groups answer a duplicate from their
      // reply table.
      long arrived = System.nanoTime();
      ReplyRouter.Wait wait = router.join(s.id());
      CompletableFuture<GroupState.Reply> reply = wait.reply();
      if (wait.submit()) {
        channels.submit(s);
      }
      return reply.handle((r, err) -> {
        int hint = channels.leaderHint(s.replyGroup());
        try {
          requestListener.answered(s.replyGroup(), s.dests().length, System.nanoTime() - arrived, err == null);
        } catch (RuntimeException e) {
          LOG.warn("node {}: request listener failed: {}", nodeId, e.toString());
        }
        if (err != null) {
          return error(GroupState.UNAVAILABLE, "not answered: " + err, hint);
        }
        return new Wire.ClientReply(request.requestId(), r.status(), r.body(), r.error(), hint);
      });
    }

    @Override
    public CompletableFuture<Wire.ClientReply> query(Wire.QueryRequest request) {
      if (request.group() == null || !cluster.groups().containsKey(request.group()) || request.query() == null) {
        return CompletableFuture.completedFuture(error(GroupState.BAD_REQUEST, "unknown group " + request.group(), 0));
      }
      String malformed = malformed(request.query());
      if (malformed != null) {
        return CompletableFuture.completedFuture(error(GroupState.BAD_REQUEST, "malformed query: " + malformed, 0));
      }
      return channels.queries().query(request.group(), request.query()).handle((bytes, err) -> {
        int hint = channels.leaderHint(request.group());
        if (err != null) {
          Throwable cause = err instanceof java.util.concurrent.CompletionException && err.getCause() != null
              ? err.getCause() : err;
          return cause instanceof io.eyrie.multicast.internal.GroupQueries.QueryException
              ? error(GroupState.ERROR, "query refused: " + cause.getMessage(), hint)
              : error(GroupState.UNAVAILABLE, "query failed: " + cause, hint);
        }
        return new Wire.ClientReply(request.requestId(), GroupState.OK, bytes, null, hint);
      });
    }

    @Override
    public CompletableFuture<Wire.ClientReply> view(Wire.ViewRequest request) {
      ClusterConfig c = cluster;
      ClusterConfig.Builder b = ClusterConfig.newBuilder();
      c.nodes().values().forEach(n -> b.node(n.id(), n.host(), n.raftPort(), n.clientPort()));
      for (ClusterConfig.GroupInfo g : c.groups().values()) {
        if (open.contains(g.id())) {
          b.group(g.id(), g.kind(), g.members());
        }
      }
      return CompletableFuture.completedFuture(new Wire.ClientReply(request.requestId(), GroupState.OK,
          codec.encode(b.build().toText()), null, 0));
    }

    /** True if the message is the group change that opens {@code g} (it names g before g is open). */
    private boolean opens(Wire.Start s, GroupId g) {
      try {
        return s.payload().length > 0 && codec.decode(s.payload()) instanceof Wire.GroupChange c && c.open()
            && g.equals(c.group());
      } catch (IllegalArgumentException e) {
        return false;
      }
    }

    /** Why the bytes do not decode with this node's codec, or null if they do. */
    private String malformed(byte[] bytes) {
      try {
        codec.decode(bytes);
        return null;
      } catch (IllegalArgumentException e) {
        return e.getMessage();
      }
    }

    private Wire.ClientReply error(int status, String message, int hint) {
      return new Wire.ClientReply(0, status, null, message, hint);
    }
  }
}
