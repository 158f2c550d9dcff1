package io.eyrie.multicast.internal.transport;

import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.multicast.NodeOptions.RaftTransport;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.netty.NettyConfigKeys;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;

/** Mapping between Eyrie's cluster description and Ratis ids, properties and clients. */
public final class RatisSupport {
  /**
   * Ratis's shaded Netty logs through java.util.logging, and its server pipeline logs every
   * connection event at INFO: keep a strong reference (JUL holds loggers weakly) at WARNING.
   */
  private static final java.util.logging.Logger SHADED_NETTY_LOG = quiet("org.apache.ratis.thirdparty.io.netty");
  /** The same for Ratis's shaded gRPC (the gRPC transport), which logs its setup at INFO. */
  private static final java.util.logging.Logger SHADED_GRPC_LOG = quiet("org.apache.ratis.thirdparty.io.grpc");

  /** The system property giving the event-loop threads of each group of Ratis's shaded Netty. */
  public static final String EVENT_LOOP_THREADS_PROPERTY = io.eyrie.multicast.NodeOptions.EVENT_LOOP_THREADS_PROPERTY;

  /**
   * Event-loop threads per Ratis Netty server and client when the property is not set. Ratis's
   * Netty server handles each request on its event-loop thread and blocks it until the write
   * commits (client requests) or the follower's log is synced (appendEntries); Netty's default
   * of two per core leaves a few threads shared by every group's appends and by the channel
   * batches that wait for their commits, so groups wait on each other. Issue 15 measured 32
   * against the default (4 on 2 cores): 2-group multicast 2.2 times faster, 4-group 1.4 times,
   * raw Ratis 1.6 times; 8, 16 and 64 are still to be compared ({@code bin/bench multicast
   * --event-loop-threads N}).
   */
  public static final int EVENT_LOOP_THREADS_DEFAULT = io.eyrie.multicast.NodeOptions.EVENT_LOOP_THREADS_DEFAULT;

  /** The JDK's system property giving the parallelism of the common fork-join pool. */
  public static final String COMMON_POOL_PARALLELISM_PROPERTY = "java.util.concurrent.ForkJoinPool.common.parallelism";

  static {
    configureJvm();
  }

  private RatisSupport() {}

  /**
   * Sets, unless the user set them, the JVM-wide properties Eyrie needs before the classes that
   * read them load: the shaded Netty's event-loop thread count (Netty reads it once), and on a
   * machine with at most two cores the common fork-join pool's parallelism (see {@link
   * #configureCommonPool}). {@link io.eyrie.multicast.Node} calls it in its static initializer,
   * loading this class does, and Eyrie's launchers call it first thing in {@code main}.
   */
  public static void configureJvm() {
    if (System.getProperty(EVENT_LOOP_THREADS_PROPERTY) == null) {
      System.setProperty(EVENT_LOOP_THREADS_PROPERTY, String.valueOf(EVENT_LOOP_THREADS_DEFAULT));
    }
    configureCommonPool();
  }

  /**
   * Gives the common fork-join pool a parallelism of 2 on a machine with at most two cores,
   * unless the user set it. The JDK sizes that pool at cores - 1, and when that is 1 every
   * {@code CompletableFuture} task run "async" without an executor starts a thread of its own
   * (the JDK's {@code ThreadPerTaskExecutor}). Ratis 3.3.0 does that for every appendEntries a
   * follower takes ({@code ServerImplUtils.NavigableIndices.append}): on 2 cores a loaded cluster
   * started and ended about 2,500 threads per second. The setting only takes effect if neither
   * {@code ForkJoinPool} nor {@code CompletableFuture} was initialised before; if one was, a
   * warning says which flag to pass.
   */
  static void configureCommonPool() {
    if (Runtime.getRuntime().availableProcessors() <= 2 && System.getProperty(COMMON_POOL_PARALLELISM_PROPERTY) == null) {
      System.setProperty(COMMON_POOL_PARALLELISM_PROPERTY, "2");
    }
    if (!asyncTasksPooled() && !warnedThreadPerTask) {
      warnedThreadPerTask = true;
      org.slf4j.LoggerFactory.getLogger(RatisSupport.class).warn("CompletableFuture starts a thread per async task in this JVM (common pool parallelism {}), which costs"
          + " Ratis much CPU; start the JVM with -D{}=2", ForkJoinPool.getCommonPoolParallelism(),
          COMMON_POOL_PARALLELISM_PROPERTY);
    }
  }

  private static volatile boolean warnedThreadPerTask;

  /** True if async {@code CompletableFuture} tasks without an executor run on the common pool, not a thread each. */
  public static boolean asyncTasksPooled() {
    return new CompletableFuture<Void>().defaultExecutor() instanceof ForkJoinPool;
  }

  private static java.util.logging.Logger quiet(String name) {
    java.util.logging.Logger l = java.util.logging.Logger.getLogger(name);
    l.setLevel(java.util.logging.Level.WARNING);
    return l;
  }

  /** The Ratis peer id of a node. */
  public static RaftPeerId peerId(int nodeId) {
    return RaftPeerId.valueOf("n" + nodeId);
  }

  /** The node id of a Ratis peer id, or 0 if it is not one of ours. */
  public static int nodeId(RaftPeerId peer) {
    if (peer == null) {
      return 0;
    }
    String s = peer.toString();
    try {
      return s.startsWith("n") ? Integer.parseInt(s.substring(1)) : 0;
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** The Ratis group id of a group: a name-derived UUID, the same on every node. */
  public static RaftGroupId raftGroupId(GroupId g) {
    return RaftGroupId.valueOf(UUID.nameUUIDFromBytes(("eyrie-group:" + g.name()).getBytes(StandardCharsets.UTF_8)));
  }

  /**
   * The Ratis group of a group, with its members' Raft addresses (all of equal priority: a node
   * moves leadership to the group's {@link #preferredLeader} itself, see {@code Node}).
   */
  public static RaftGroup raftGroup(ClusterConfig cluster, GroupId g) {
    List<RaftPeer> peers = new ArrayList<>();
    List<Integer> members = cluster.group(g).members();
    for (int m : members) {
      ClusterConfig.NodeInfo n = cluster.node(m);
      peers.add(RaftPeer.newBuilder().setId(peerId(m)).setAddress(n.host() + ":" + n.raftPort()).build());
    }
    return RaftGroup.valueOf(raftGroupId(g), peers);
  }

  /**
   * The node a group's leadership is meant to be on: rotated by the group's position in the
   * cluster, so that the groups' leaders spread over the nodes (one node's threads do not carry
   * every group's appends and channels).
   */
  public static int preferredLeader(ClusterConfig cluster, GroupId g) {
    List<Integer> members = cluster.group(g).members();
    return members.get(Math.floorMod(preferredIndex(cluster, g), members.size()));
  }

  /** The group's position among the cluster's groups, which rotates the preferred leader. */
  private static int preferredIndex(ClusterConfig cluster, GroupId g) {
    int i = 0;
    for (GroupId x : cluster.groupIds()) {
      if (x.equals(g)) {
        return i;
      }
      i++;
    }
    return 0;
  }

  /**
   * Server properties for a node: its Raft transport (Netty RPC by default, {@link
   * NodeOptions#raftTransport()}) on its Raft port, linearizable reads, on-disk log with snapshots.
   */
  public static RaftProperties serverProperties(ClusterConfig.NodeInfo node, File storage, NodeOptions o) {
    SHADED_NETTY_LOG.setLevel(java.util.logging.Level.WARNING);
    SHADED_GRPC_LOG.setLevel(java.util.logging.Level.WARNING);
    RaftProperties p = new RaftProperties();
    rpc(p, o);
    if (o.raftTransport() == RaftTransport.GRPC) {
      RaftGrpc.configureServer(p, node);
    } else {
      NettyConfigKeys.Server.setHost(p, node.host());
      NettyConfigKeys.Server.setPort(p, node.raftPort());
    }
    RaftServerConfigKeys.setStorageDir(p, List.of(storage));
    RaftServerConfigKeys.Read.setOption(p, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
    RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
    RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, o.snapshotThreshold());
    RaftServerConfigKeys.Snapshot.setRetentionFileNum(p, 2);
    RaftServerConfigKeys.Snapshot.setTriggerWhenStopEnabled(p, o.snapshotOnStop());
    RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf(o.segmentSizeMax()));
    RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
    RaftServerConfigKeys.Log.setPurgeGap(p, 1);
    RaftServerConfigKeys.Log.Appender.setInstallSnapshotEnabled(p, true);
    RaftServerConfigKeys.Rpc.setTimeoutMin(p, TimeDuration.valueOf(o.electionTimeoutMinMs(), TimeUnit.MILLISECONDS));
    RaftServerConfigKeys.Rpc.setTimeoutMax(p, TimeDuration.valueOf(o.electionTimeoutMaxMs(), TimeUnit.MILLISECONDS));
    RaftServerConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(o.ratisRequestTimeoutMs(), TimeUnit.MILLISECONDS));
    RaftServerConfigKeys.Read.setTimeout(p, TimeDuration.valueOf(o.ratisRequestTimeoutMs(), TimeUnit.MILLISECONDS));
    // A leader that missed a majority's heartbeats for an election timeout steps down, and by
    // default then refuses to stand for election for 10 s. The stepped-down leader usually has
    // the longest log, so the others' pre-votes are rejected meanwhile: one slow moment (a GC
    // pause, a loaded machine) would leave the group without a leader for 10 s or more, and
    // every multicast to it stalls. Wait one election timeout instead.
    RaftServerConfigKeys.LeaderElection.setLeaderStepDownWaitTime(p,
        TimeDuration.valueOf(o.electionTimeoutMaxMs(), TimeUnit.MILLISECONDS));
    return p;
  }

  /**
   * Sets a Ratis client's RPC: Eyrie's Netty RPC, ready for TLS when {@code tls} is set (pass
   * {@link RaftTls#parameters} to the client too).
   */
  public static void clientRpc(RaftProperties p, io.eyrie.multicast.TlsConfig tls) {
    RaftConfigKeys.Rpc.setType(p, new EyrieNettyRpc());
    if (tls != null) {
      RaftTls.configure(p);
    }
  }

  /**
   * Sets a Ratis client's RPC to {@code transport}, with the default frame limit, ready for TLS
   * when {@code tls} is set (pass {@link #clientParameters} to the client too).
   */
  public static void clientRpc(RaftProperties p, io.eyrie.multicast.TlsConfig tls, RaftTransport transport) {
    if (transport == RaftTransport.GRPC) {
      RaftGrpc.configure(p, RaftFrameLimit.MAX_FRAME_BYTES);
    } else {
      clientRpc(p, tls);
    }
  }

  /**
   * The Ratis parameters of a client that is not a node's ({@code eyrie status}, a harness's
   * leader query) on {@code transport}, as {@code tls}'s identity (a node's) or in plaintext.
   */
  public static Parameters clientParameters(io.eyrie.multicast.TlsConfig tls, RaftTransport transport) {
    Parameters p = RaftTls.parameters(tls, NodeOptions.TLS_HANDSHAKE_TIMEOUT_MS_DEFAULT);
    if (transport == RaftTransport.GRPC && tls != null) {
      RaftGrpc.tls(p, tls, new RaftPortCounters());
    }
    return p;
  }

  /** Sets the RPC of a node's servers and clients: its Raft transport, its TLS and frame limit. */
  private static void rpc(RaftProperties p, NodeOptions o) {
    if (o.raftTransport() == RaftTransport.GRPC) {
      RaftGrpc.configure(p, RaftFrameLimit.forClientFrames(o.maxFrameBytes()));
    } else {
      clientRpc(p, o.tls());
    }
  }

  /**
   * The Ratis parameters of a node's servers and clients: the Raft port's frame limit, which grows
   * with the client port's ({@link RaftFrameLimit#forClientFrames}); with gRPC, its TLS for gRPC
   * ({@link RaftGrpc#tls}); its TLS, if it has some ({@link
   * RaftTls}), with the node's handshake timeout but never below the default (10 s): between
   * nodes a handshake that times out costs a reconnection and a retry, and on a loaded machine
   * a short timeout failed handshakes that were only slow.
   */
  public static Parameters parameters(NodeOptions o, RaftPortCounters counters) {
    Parameters p = RaftTls.parameters(o.tls(),
        Math.max(o.tlsHandshakeTimeoutMs(), NodeOptions.TLS_HANDSHAKE_TIMEOUT_MS_DEFAULT));
    p.put(RaftFrameLimit.KEY, RaftFrameLimit.forClientFrames(o.maxFrameBytes()), Long.class);
    counters.into(p);
    if (o.raftTransport() == RaftTransport.GRPC && o.tls() != null) {
      RaftGrpc.tls(p, o.tls(), counters);
    }
    return p;
  }

  /**
   * A Ratis client for one group, with a bounded retry policy so that callers see failures; over
   * TLS, as the node, if the node has TLS.
   */
  public static RaftClient newClient(ClusterConfig cluster, GroupId g, NodeOptions o) {
    RaftProperties p = new RaftProperties();
    rpc(p, o);
    RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(o.ratisRequestTimeoutMs(), TimeUnit.MILLISECONDS));
    RaftClientConfigKeys.Async.setOutstandingRequestsMax(p, 256);
    return RaftClient.newBuilder()
        .setProperties(p)
        .setParameters(parameters(o, new RaftPortCounters()))
        .setRaftGroup(raftGroup(cluster, g))
        .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(
            Math.max(3, 2 * o.electionTimeoutMaxMs() / 100), TimeDuration.valueOf(100, TimeUnit.MILLISECONDS)))
        .build();
  }
}
