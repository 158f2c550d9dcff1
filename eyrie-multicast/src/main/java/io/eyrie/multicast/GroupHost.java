package io.eyrie.multicast;

import io.eyrie.multicast.NodeOptions.RaftTransport;
import io.eyrie.multicast.internal.Wire;
import io.eyrie.multicast.internal.replication.GroupStateMachine;
import io.eyrie.multicast.internal.replication.NodeChannels;
import io.eyrie.multicast.internal.replication.ReplyRouter;
import io.eyrie.multicast.internal.state.StateListener;
import io.eyrie.multicast.internal.state.StoredReply;
import io.eyrie.multicast.internal.transport.RaftPortCounters;
import io.eyrie.multicast.internal.transport.RatisSupport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupManagementRequest;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's Ratis server and the groups it hosts: the server itself, a state machine and a reply
 * router per hosted group, and the cluster as the node knows it. Groups added to the running
 * cluster are learned from what the hosted replicas deliver: known first (channel senders towards
 * them, and a replica here if this node is a member), then open to clients. What was learned is
 * kept in the storage directory ({@link AddedGroups}), so that Ratis finds the added groups' state
 * machines after a restart.
 */
final class GroupHost {
  private static final Logger LOG = LoggerFactory.getLogger(GroupHost.class);

  private final int nodeId;
  private final Path storage;
  private final Deliverer.Factory apps;
  private final NodeOptions options;
  private final Codec codec;
  /** What the Raft port refused (its frame limit and TLS), for {@link Node#raftPortStats()}. */
  final RaftPortCounters raftPort = new RaftPortCounters();
  /** True once the node stops: added groups are no longer hosted. */
  private final BooleanSupplier stopping;
  /** The cluster file's configuration with the groups added to the running cluster since. */
  private volatile ClusterConfig cluster;
  /** The groups clients may name: the cluster file's, and added ones once opened. */
  private final Set<GroupId> open = ConcurrentHashMap.newKeySet();
  /** The groups of the cluster file (open from the start everywhere). */
  private final Set<GroupId> fileGroups;
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
  private final Map<GroupId, Set<GroupId>> initialKnown = new ConcurrentHashMap<>();
  /** What {@link StateListener#groupKnown} reported, until {@link #learn} records it. */
  private final Map<GroupId, Set<GroupId>> knownAtDelivery = new ConcurrentHashMap<>();
  private final SortedMap<GroupId, GroupStateMachine> machines = Collections.synchronizedSortedMap(new TreeMap<>());
  private final Map<GroupId, ReplyRouter> routers = new ConcurrentHashMap<>();
  /** The groups whose replica here runs, in the order they started. */
  private final CopyOnWriteArrayList<GroupId> hosted = new CopyOnWriteArrayList<>();
  private final ExecutorService groupAdder = Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "eyrie-group-add");
    t.setDaemon(true);
    return t;
  });
  /** Set by {@link #start}. */
  private volatile NodeChannels channels;
  /** Retries of the reply gates' started queries (design 4.3.1, rule 11). */
  private final java.util.concurrent.ScheduledExecutorService gateRetries =
      Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "eyrie-reply-gate");
        t.setDaemon(true);
        return t;
      });

  /** A router of group {@code g}'s replies, gated on the other destinations' starts. */
  private ReplyRouter newRouter(GroupId g) {
    return new ReplyRouter(g, (h, ids) -> {
      NodeChannels c = channels;
      return c == null ? java.util.concurrent.CompletableFuture.failedFuture(new IllegalStateException("not started"))
          : c.started(h, ids);
    }, gateRetries);
  }
  private RaftServer server;

  /**
   * Reads the groups added to the running cluster that the storage directory remembers (creating
   * the directory if missing). Nothing runs until {@link #start}.
   */
  GroupHost(ClusterConfig fileCluster, int nodeId, Path storage, Deliverer.Factory apps, NodeOptions options,
      Codec codec, BooleanSupplier stopping) throws IOException {
    this.nodeId = nodeId;
    this.storage = storage;
    this.apps = apps;
    this.options = options;
    this.codec = codec;
    this.stopping = stopping;
    open.addAll(fileCluster.groupIds());
    this.fileGroups = Set.copyOf(fileCluster.groupIds());
    this.fileCluster = fileCluster;
    Files.createDirectories(storage);
    this.cluster = AddedGroups.load(storage, fileCluster, open, initialKnown);
    for (GroupId g : cluster.groupsOf(nodeId)) {
      routers.put(g, newRouter(g));
    }
  }

  /**
   * Starts the Ratis server with a replica of each group the cluster places on this node (adding
   * the groups the server's storage does not have yet) and attaches each to the node's channels.
   */
  void start(NodeChannels channels) throws IOException {
    this.channels = channels;
    ClusterConfig c = cluster;
    ClusterConfig.NodeInfo self = c.node(nodeId);
    List<GroupId> local = c.groupsOf(nodeId);
    Function<RaftGroupId, GroupStateMachine> registry = this::newMachine;
    this.server = RaftServer.newBuilder()
        .setServerId(RatisSupport.peerId(nodeId))
        .setProperties(RatisSupport.serverProperties(self, storage.toFile(), options))
        .setParameters(RatisSupport.parameters(options, raftPort))
        .setStateMachineRegistry(registry::apply)
        .build();
    server.start();
    Set<RaftGroupId> existing = new java.util.HashSet<>();
    server.getGroupIds().forEach(existing::add);
    for (GroupId g : local) {
      if (!existing.contains(RatisSupport.raftGroupId(g))) {
        RaftClientReply r = addGroup(c, g);
        if (!r.isSuccess()) {
          throw new IOException("cannot add group " + g + ": " + r.getException());
        }
      }
    }
    for (GroupId g : local) {
      channels.attach(g, server.getDivision(RatisSupport.raftGroupId(g)));
      hosted.add(g);
    }
  }

  private RaftClientReply addGroup(ClusterConfig c, GroupId g) throws IOException {
    return server.groupManagement(GroupManagementRequest.newAdd(ClientId.randomId(), RatisSupport.peerId(nodeId), 0,
        RatisSupport.raftGroup(c, g)));
  }

  /** The transport of this node's Raft port. */
  RaftTransport raftTransport() {
    return options.raftTransport();
  }

  /** The cluster as this node knows it. */
  ClusterConfig cluster() {
    return cluster;
  }

  /** True if clients may name the group. */
  boolean isOpen(GroupId g) {
    return open.contains(g);
  }

  /** The groups hosted here. */
  List<GroupId> groups() {
    return List.copyOf(hosted);
  }

  /** The Ratis server (null before {@link #start}). */
  RaftServer server() {
    return server;
  }

  /** The Ratis division of a group hosted here. */
  RaftServer.Division division(GroupId g) throws IOException {
    return server.getDivision(RatisSupport.raftGroupId(g));
  }

  /** The state machine of a hosted group; throws if the group is not hosted here. */
  GroupStateMachine machine(GroupId g) {
    GroupStateMachine sm = machines.get(g);
    if (sm == null) {
      throw new IllegalArgumentException("node " + nodeId + " does not host group " + g);
    }
    return sm;
  }

  /** The state machine of a group, or null if it has none here (yet). */
  GroupStateMachine machineOrNull(GroupId g) {
    return machines.get(g);
  }

  /** The router of replies to requests whose reply group is {@code g}, or null if not hosted here. */
  ReplyRouter router(GroupId g) {
    return routers.get(g);
  }

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
    routers.putIfAbsent(group, newRouter(group));
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
        options.clientExpiryMs(), new GroupStateMachine.Hooks() {
          @Override
          public void leaderChanged(GroupId g, boolean isLeader, int leaderNode) {
            channels.leaderChanged(g, isLeader, leaderNode);
          }

          @Override
          public void components(GroupId g, List<Wire.Component> received) {
            channels.componentsFor(g, received);
          }
        });
    sm.setListener(new StateListener() {
      @Override
      public void reply(MsgId id, StoredReply reply) {
        routers.get(group).complete(id, reply);
      }

      @Override
      public void outboxChanged(GroupId to) {
        channels.outboxChanged(group, to);
      }

      @Override
      public void undecided(MsgId id) {
        channels.undecided(group, id);
      }

      @Override
      public void membershipChanged(SortedMap<GroupId, ClusterConfig.GroupInfo> known, Set<GroupId> opened) {
        learn(known, opened);
      }

      @Override
      public void groupKnown(ClusterConfig.GroupInfo added, Set<GroupId> knownThen) {
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
  static ClusterConfig initialCluster(ClusterConfig file, GroupId g, ClusterConfig learned, Set<GroupId> since) {
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
  private Set<GroupId> addedOnly(java.util.Collection<GroupId> groups) {
    java.util.TreeSet<GroupId> out = new java.util.TreeSet<>(groups);
    out.removeAll(fileGroups);
    return Set.copyOf(out);
  }

  /**
   * Learns what a hosted replica delivered about groups added to the running cluster: a group
   * becomes known here (channel senders towards it; a replica of it if this node is a member,
   * created off the apply thread), then open (clients may name it). Remembered in the storage
   * directory, so that Ratis finds the added groups' state machines after a restart.
   */
  private synchronized void learn(SortedMap<GroupId, ClusterConfig.GroupInfo> known, Set<GroupId> opened) {
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
      Set<GroupId> since = knownAtDelivery.remove(g.id());
      initialKnown.putIfAbsent(g.id(), since != null ? since : addedOnly(known.keySet()));
      channels.learn(cluster, g.id());
      LOG.info("node {}: learned group {} on nodes {}", nodeId, g.id(), g.members());
      if (g.members().contains(nodeId)) {
        routers.putIfAbsent(g.id(), newRouter(g.id()));
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

  /** Creates this node's replica of an added group, unless it has one (Ratis's group add). */
  private void host(GroupId g) {
    if (stopping.getAsBoolean() || hosted.contains(g)) {
      return;
    }
    RaftGroupId rgid = RatisSupport.raftGroupId(g);
    try {
      boolean exists = false;
      for (RaftGroupId x : server.getGroupIds()) {
        exists |= x.equals(rgid);
      }
      if (!exists) {
        RaftClientReply r = addGroup(cluster, g);
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

  /** Stops creating replicas of added groups (the first step of closing). */
  void stopAddingGroups() {
    groupAdder.shutdownNow();
  }

  /** Closes the Ratis server and fails every request still waiting for a reply. */
  void close() {
    try {
      if (server != null) {
        server.close();
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("node {}: closing the Ratis server: {}", nodeId, e.toString());
    }
    routers.values().forEach(ReplyRouter::failAll);
    gateRetries.shutdownNow();
  }
}
