package io.eyrie.multicast.internal.replication;

import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.multicast.NodeStats;
import io.eyrie.multicast.internal.Wire;
import io.eyrie.multicast.internal.transport.RatisSupport;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's traffic towards Ratis groups: the submitters of client starts (one per group), the
 * channel senders of the groups this node leads, and linearizable queries. A ticker re-checks
 * leadership and drives retries and bare acknowledgements.
 */
public final class NodeChannels implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(NodeChannels.class);
  private static final long TICK_MS = 10;

  /** The cluster as this node knows it (groups added to the running cluster included). */
  private volatile ClusterConfig cluster;
  private final Codec codec;
  private final NodeOptions options;
  private final Function<GroupId, GroupStateMachine> machines;
  private final Map<GroupId, Submitter> submitters = new ConcurrentHashMap<>();
  private final GroupQueries queries;
  /** The unlogged questions to other groups' leaders, over the node-to-node link. */
  private final PeerQuestions peers;
  /** Every write path this node made (submitters' and senders'): for traffic and close. */
  private final List<RaftClientHolder> writers = new java.util.concurrent.CopyOnWriteArrayList<>();
  private final Map<GroupId, Map<GroupId, ChannelSender>> senders = new ConcurrentHashMap<>();
  private final Map<GroupId, RaftServer.Division> divisions = new ConcurrentHashMap<>();
  private final Map<GroupId, Integer> leaderHints = new ConcurrentHashMap<>();
  /** Pumps of the channel senders, one queued at a time per sender. */
  private final Coalescing<ChannelSender> pumpRuns;
  private final ScheduledExecutorService ticker;
  private final ExecutorService pumps;
  /** Answers other nodes' questions about hosted groups ({@link #answerPeer}). */
  private final ExecutorService peerAnswers;
  /** The unlogged side of design 4.3.1: the exchanges of the hosted groups and the gate's questions. */
  private final LeaderExchanges exchanges;
  private volatile SubmitFailureHandler submitFailed = (g, s, t) -> {};
  private final java.util.concurrent.atomic.AtomicLong startFailures = new java.util.concurrent.atomic.AtomicLong();

  /** What a node does with a start whose submission to one of its destination groups failed. */
  @FunctionalInterface
  public interface SubmitFailureHandler {
    /**
     * Called once per failed start and group.
     *
     * @param group the destination group the start could not be submitted to
     * @param start the start
     * @param failure why
     */
    void failed(GroupId group, Wire.Start start, Throwable failure);
  }
  private volatile boolean closed;

  public NodeChannels(ClusterConfig cluster, int nodeId, Codec codec, NodeOptions options,
      Function<GroupId, GroupStateMachine> machines) {
    this.cluster = cluster;
    this.codec = codec;
    this.options = options;
    this.machines = machines;
    this.queries = new GroupQueries(() -> this.cluster, options, divisions::get);
    this.ticker = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "eyrie-n" + nodeId + "-ticker"));
    this.pumps = Executors.newSingleThreadExecutor(r -> daemon(r, "eyrie-n" + nodeId + "-channels"));
    this.pumpRuns = new Coalescing<>(pumps, "channel pump");
    this.peerAnswers = Executors.newSingleThreadExecutor(r -> daemon(r, "eyrie-n" + nodeId + "-peer-answers"));
    this.peers = new PeerQuestions(() -> this.cluster, options, codec, queries);
    this.exchanges = new LeaderExchanges(nodeId, codec, peers, divisions::get, machines, g -> submitter(g));
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  /**
   * Sets what happens when a start could not be submitted to one of its destination groups (any
   * of them, not only its reply group: a start missing at one destination leaves the message
   * undecided at the others until it arrives).
   */
  public void onSubmitFailure(SubmitFailureHandler handler) {
    this.submitFailed = handler;
  }

  /** Submits a start to one group again after a short pause (after a failed submission). */
  public void resubmitLater(GroupId group, Wire.Start s) {
    if (closed) {
      return;
    }
    try {
      ticker.schedule(() -> {
        if (!closed) {
          submitTo(group, s);
        }
      }, RESUBMIT_PAUSE_MS, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // closing
    }
  }

  /** The pause before a failed start is submitted again: about one leader election's worth of retries has passed. */
  static final long RESUBMIT_PAUSE_MS = 100;

  /** Registers a hosted group's Ratis division and creates its channel senders. */
  public synchronized void attach(GroupId g, RaftServer.Division division) {
    Map<GroupId, ChannelSender> out = new ConcurrentHashMap<>();
    senders.put(g, out);
    for (GroupId to : cluster.groupIds()) {
      addSender(g, to);
    }
    divisions.put(g, division);
    exchanges.attach(g);
  }

  /** A hosted group's replica applied a start that made a multi-destination message undecided. */
  public void undecided(GroupId g, io.eyrie.multicast.MsgId id) {
    exchanges.undecided(g, id);
  }

  /** Components another group sent to this node's replica of {@code g} (a push, or a pull's answer). */
  public void componentsFor(GroupId g, List<Wire.Component> list) {
    exchanges.componentsFor(g, list);
  }

  /** Which of {@code ids} have started at group {@code g} (rule 11; see {@link LeaderExchanges#started}). */
  public java.util.concurrent.CompletableFuture<java.util.Set<io.eyrie.multicast.MsgId>> started(GroupId g,
      List<io.eyrie.multicast.MsgId> ids) {
    return exchanges.started(g, ids);
  }

  /**
   * Learns a group added to the running cluster: replaces the cluster this node knows and opens
   * a channel sender towards the group from every hosted group.
   */
  public synchronized void learn(ClusterConfig newer, GroupId added) {
    this.cluster = newer;
    for (GroupId from : senders.keySet()) {
      addSender(from, added);
    }
  }

  private void addSender(GroupId from, GroupId to) {
    Map<GroupId, ChannelSender> out = senders.get(from);
    if (to.equals(from) || out == null || out.containsKey(to)) {
      return;
    }
    ChannelSender s = new ChannelSender(machines.apply(from), to, writer(cluster, to), codec, options.channelWindow(),
        options.channelBatchMaxItems());
    out.put(to, s);
  }

  private void startsFailed(GroupId g, List<Wire.Start> failed, Throwable t) {
    startFailures.addAndGet(failed.size());
    for (Wire.Start s : failed) {
      submitFailed.failed(g, s, t);
    }
  }

  /** Starts the ticker. */
  public void start() {
    ticker.scheduleWithFixedDelay(this::tick, TICK_MS, TICK_MS, TimeUnit.MILLISECONDS);
    exchanges.start(TICK_MS);
  }

  private void tick() {
    try {
      for (Map.Entry<GroupId, RaftServer.Division> e : divisions.entrySet()) {
        GroupId g = e.getKey();
        boolean leader = e.getValue().getInfo().isLeader();
        int hint = RatisSupport.nodeId(e.getValue().getInfo().getLeaderId());
        if (hint > 0) {
          leaderHints.put(g, hint);
        }
        for (ChannelSender s : senders.getOrDefault(g, Map.of()).values()) {
          if (leader) {
            s.activate();
            s.pump(true);
          } else {
            s.deactivate();
          }
        }
      }
    } catch (RuntimeException e) {
      LOG.warn("channel tick failed: {}", e.toString());
    }
  }

  /** The local replica of a group changed leadership (a Ratis notification). */
  public void leaderChanged(GroupId g, boolean isLeader, int leaderNode) {
    if (leaderNode > 0) {
      leaderHints.put(g, leaderNode);
    }
    for (ChannelSender s : senders.getOrDefault(g, Map.of()).values()) {
      if (isLeader) {
        s.activate();
        schedule(s);
      } else {
        s.deactivate();
      }
    }
  }

  /** The outbox of a local replica towards a group has new items. */
  public void outboxChanged(GroupId from, GroupId to) {
    Map<GroupId, ChannelSender> out = senders.get(from);
    ChannelSender s = out == null ? null : out.get(to);
    if (s != null && s.isActive()) {
      schedule(s);
    }
  }

  private void schedule(ChannelSender s) {
    if (!closed) {
      pumpRuns.request(s, () -> s.pump(false));
    }
  }


  /**
   * Submits a client's start to every destination group's log (design 4.3.1, rule 1: only a
   * Start or a forwarded Propose creates a message, and a Propose is the failure path).
   */
  public void submit(Wire.Start s) {
    for (GroupId d : s.dests()) {
      submitTo(d, s);
    }
  }

  private void submitTo(GroupId g, Wire.Start s) {
    submitter(g).submit(s);
  }

  /** How this node writes to group {@code g}: to its own replica when that leads, else through a Ratis client. */
  private RaftClientHolder writer(ClusterConfig c, GroupId g) {
    RaftClientHolder w = new RaftClientHolder(() -> RatisSupport.newClient(c, g, options), () -> divisions.get(g), options);
    writers.add(w);
    return w;
  }

  private Submitter submitter(GroupId g) {
    return submitters.computeIfAbsent(g, k -> new Submitter(k,
        writer(cluster, k), codec,
        options.submitInFlight(), options.submitBatchMax(), (List<Wire.Start> failed, Throwable t) ->
            startsFailed(k, failed, t)));
  }


  /** Linearizable read-only queries to groups. */
  public GroupQueries queries() {
    return queries;
  }

  /**
   * Answers another node's unlogged question about group {@code g} (a {@code Wire.Components} push
   * or pull, a {@code StartedQuery}): from this node's replica of it when there is one (any replica
   * answers from its applied state, design 4.3.1 rule 4; a push only counts at the leader, and the
   * reply's leader hint sends the next one there), else through a Ratis read to the leader.
   */
  public CompletableFuture<byte[]> answerPeer(GroupId g, byte[] question) {
    if (divisions.containsKey(g)) {
      // Off the client port's event loop: the answer takes the replica's lock, which an apply
      // may hold for a while, and the loop serves every client connection.
      try {
        return CompletableFuture.supplyAsync(() -> machines.apply(g).queryLocally(question), peerAnswers);
      } catch (java.util.concurrent.RejectedExecutionException e) {
        return CompletableFuture.failedFuture(e); // closing
      }
    }
    return queries.queryUnordered(g, question);
  }

  /** Returns true if the local replica of a group leads it. */
  public boolean isLeader(GroupId g) {
    RaftServer.Division d = divisions.get(g);
    return d != null && d.getInfo().isLeader();
  }

  /** Returns the last known leader node of a group, or 0. */
  public int leaderHint(GroupId g) {
    return leaderHints.getOrDefault(g, 0);
  }

  /** Describes the senders and submitters of this node for diagnosis. */
  public String describe() {
    StringBuilder b = new StringBuilder();
    for (Map.Entry<GroupId, RaftServer.Division> e : divisions.entrySet()) {
      var info = e.getValue().getInfo();
      b.append("  ").append(e.getKey()).append(" leader=").append(info.isLeader()).append(" role=")
          .append(info.getCurrentRole()).append(" term=").append(info.getCurrentTerm()).append(" leaderId=")
          .append(info.getLeaderId()).append(" applied=").append(info.getLastAppliedIndex()).append('\n');
      for (ChannelSender s : senders.getOrDefault(e.getKey(), Map.of()).values()) {
        b.append("    ").append(s.describe()).append('\n');
      }
    }
    for (Submitter s : submitters.values()) {
      b.append("  ").append(s.describe()).append('\n');
    }
    return b.toString();
  }

  /** Says which submitters hold a message, queued or in flight (for diagnosis); empty if none. */
  public String describe(io.eyrie.multicast.MsgId id) {
    StringBuilder b = new StringBuilder();
    for (Submitter s : submitters.values()) {
      String d = s.describe(id);
      if (d != null) {
        b.append(' ').append(d);
      }
    }
    return b.toString();
  }

  /** Returns traffic counters. */
  public NodeStats.Traffic traffic() {
    long entries = 0;
    long starts = 0;
    for (Submitter s : submitters.values()) {
      entries += s.entries.get();
      starts += s.starts.get();
    }
    long batches = 0;
    long items = 0;
    long bytes = 0;
    long backlog = 0;
    for (Map<GroupId, ChannelSender> m : senders.values()) {
      for (ChannelSender s : m.values()) {
        batches += s.batches.get();
        items += s.items.get();
        bytes += s.bytes.get();
        if (s.isActive()) {
          backlog += s.backlog();
        }
      }
    }
    // Every start entry and channel batch is a request of its own.
    long logEntries = entries + batches;
    long local = 0;
    for (RaftClientHolder w : writers) {
      local += w.localWrites();
    }
    return new NodeStats.Traffic(entries, starts, batches, items, bytes, backlog, startFailures.get(), logEntries,
        local, peers.asked(), peers.fellBack());
  }

  @Override
  public void close() {
    closed = true;
    ticker.shutdownNow();
    pumps.shutdownNow();
    peerAnswers.shutdownNow();
    exchanges.close();
    for (Map<GroupId, ChannelSender> m : senders.values()) {
      m.values().forEach(ChannelSender::deactivate);
    }
    submitters.values().forEach(Submitter::close);
    List<AutoCloseable> holders = new java.util.ArrayList<>(writers);
    holders.add(queries);
    holders.add(peers);
    // A Ratis client's close can wait a long time for connections to unreachable peers; the
    // node is going away, so let that happen off the caller's thread.
    Thread closer = new Thread(() -> holders.forEach(NodeChannels::closeQuietly), "eyrie-close-clients");
    closer.setDaemon(true);
    closer.start();
  }

  private static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception e) {
      LOG.debug("closing {}: {}", c, e.toString());
    }
  }
}
