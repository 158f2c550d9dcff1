package io.eyrie.multicast.internal.replication;

import io.eyrie.multicast.Codec;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.Wire;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The unlogged side of design 4.3.1 on one node: owns the {@link Exchange} of each hosted group
 * (active while the local replica leads), the single thread that runs them, and the questions
 * they and the reply gate put to other groups (components, {@code StartedQuery}): in process when
 * this node's replica can answer, otherwise over the node-to-node link ({@link PeerQuestions}).
 * What it appends (decisions, forwards) goes through the node's submitters.
 */
final class LeaderExchanges implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LeaderExchanges.class);

  private final Codec codec;
  private final PeerQuestions peers;
  private final Function<GroupId, RaftServer.Division> divisions;
  private final Function<GroupId, GroupStateMachine> machines;
  private final Function<GroupId, Submitter> submitters;
  private final Map<GroupId, Exchange> exchanges = new ConcurrentHashMap<>();
  /** Runs the exchanges' steps and the components received, off the apply and Ratis threads. */
  private final ScheduledExecutorService exchangeRunner;
  private volatile boolean closed;
  /** Flushes of the exchanges, one queued at a time per group. */
  private final Coalescing<GroupId> flushes;

  LeaderExchanges(int nodeId, Codec codec, PeerQuestions peers, Function<GroupId, RaftServer.Division> divisions,
      Function<GroupId, GroupStateMachine> machines, Function<GroupId, Submitter> submitters) {
    this.codec = codec;
    this.peers = peers;
    this.divisions = divisions;
    this.machines = machines;
    this.submitters = submitters;
    this.exchangeRunner = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "eyrie-n" + nodeId + "-exchange");
      t.setDaemon(true);
      return t;
    });
    this.flushes = new Coalescing<>(exchangeRunner, "exchange flush");
  }

  /** Creates the exchange of a group this node hosts. */
  void attach(GroupId g) {
    exchanges.computeIfAbsent(g, k -> new Exchange(k, new ExchangeNet(k)));
  }

  /** Starts the periodic step of every exchange. */
  void start(long tickMs) {
    exchangeRunner.scheduleWithFixedDelay(() -> {
      try {
        tickExchanges();
      } catch (RuntimeException e) {
        LOG.warn("exchange tick failed: {}", e.toString());
      }
    }, tickMs, tickMs, TimeUnit.MILLISECONDS);
  }

  private boolean isLeader(GroupId g) {
    RaftServer.Division d = divisions.apply(g);
    return d != null && d.getInfo().isLeader();
  }

  /** Sends a hosted group's exchange outputs: components to other groups, decisions and forwards to its own log. */
  private final class ExchangeNet implements Exchange.Net {
    private final GroupId self;

    ExchangeNet(GroupId self) {
      this.self = self;
    }

    @Override
    public void send(GroupId to, List<Wire.Component> list) {
      askLeader(to, new Wire.Components(to, list.toArray(new Wire.Component[0]))).thenAcceptAsync(a -> {
        if (a instanceof Wire.Component[] cs) {
          componentsFor(self, Arrays.asList(cs));
        }
      }, exchangeRunner).exceptionally(e -> {
        LOG.debug("{}: components to {} failed: {}", self, to, e.toString());
        return null;
      });
    }

    @Override
    public void decide(Wire.Decision d) {
      submitters.apply(self).decide(d);
    }

    @Override
    public void forward(Wire.Forward f) {
      submitters.apply(self).forward(f);
    }
  }

  /**
   * Asks a group's leader an unlogged question: in process if this node's replica leads it,
   * otherwise over the node-to-node link; the leader answers from its applied state, without a
   * ReadIndex round (the answers are facts of committed state, design 4.3.1 rule 3).
   */
  private CompletableFuture<Object> askLeader(GroupId g, Object q) {
    RaftServer.Division d = divisions.apply(g);
    if (d != null && d.getInfo().isLeader()) {
      try {
        return CompletableFuture.completedFuture(codec.decode(machines.apply(g).queryLocally(codec.encode(q))));
      } catch (RuntimeException e) {
        return CompletableFuture.failedFuture(e);
      }
    }
    return peers.ask(g, q);
  }

  /**
   * How long the reply gate waits for this node's own replica of a group to show a message
   * started before it asks the group's leader: a follower applies a moment after its leader, and
   * waiting for it costs no network round trip and no work at the leader.
   */
  static final long LOCAL_START_WAIT_MS = 20;

  /**
   * Which of {@code ids} have started at group {@code g} (rule 11): this node's replica of it
   * answers once it shows them all started (positive evidence is evidence at any replica,
   * whatever its role), waiting up to {@link #LOCAL_START_WAIT_MS} for it to apply; the leader
   * answers for those it still lacks, unless this replica leads. Answers may complete on an
   * apply thread: callers continue on their own executor.
   */
  public CompletableFuture<Set<MsgId>> started(GroupId g,
      List<MsgId> ids) {
    if (divisions.apply(g) == null) {
      return remoteStarted(g, ids, Set.of());
    }
    GroupStateMachine m = machines.apply(g);
    List<CompletableFuture<Boolean>> waits = new ArrayList<>(ids.size());
    for (MsgId id : ids) {
      waits.add(m.whenStarted(id).completeOnTimeout(false, LOCAL_START_WAIT_MS, TimeUnit.MILLISECONDS));
    }
    return CompletableFuture.allOf(waits.toArray(new CompletableFuture<?>[0]))
        .thenCompose(v -> {
          Set<MsgId> local = new HashSet<>();
          for (int i = 0; i < ids.size(); i++) {
            if (waits.get(i).join()) {
              local.add(ids.get(i));
            }
          }
          if (local.size() == ids.size() || isLeader(g)) {
            return CompletableFuture.completedFuture(local);
          }
          // Off the apply thread that may have completed the last wait.
          return CompletableFuture.supplyAsync(() -> remoteStarted(g, ids, local), exchangeRunner)
              .thenCompose(f -> f);
        });
  }

  private CompletableFuture<Set<MsgId>> remoteStarted(GroupId g,
      List<MsgId> ids, Set<MsgId> local) {
    Wire.StartedQuery q = new Wire.StartedQuery(ids.stream().filter(id -> !local.contains(id))
        .toArray(MsgId[]::new));
    return peers.ask(g, q).thenApply(a -> {
      Set<MsgId> out = new HashSet<>(local);
      out.addAll(Arrays.asList((MsgId[]) a));
      return out;
    });
  }

  /** A hosted group's replica applied a start that made a multi-destination message undecided. */
  public void undecided(GroupId g, MsgId id) {
    Exchange x = exchanges.get(g);
    if (x != null) {
      x.pending(id);
      flushLater(g, x);
    }
  }

  private void flushLater(GroupId g, Exchange x) {
    if (!closed) {
      flushes.request(g, () -> x.flush(machines.apply(g).view(), System.nanoTime()));
    }
  }


  /** Components another group sent to this node's replica of {@code g} (a push, or a pull's answer). */
  public void componentsFor(GroupId g, List<Wire.Component> list) {
    Exchange x = exchanges.get(g);
    if (x == null || closed) {
      return;
    }
    try {
      exchangeRunner.execute(() -> {
        try {
          x.received(machines.apply(g).view(), list, System.nanoTime());
        } catch (RuntimeException e) {
          LOG.warn("{}: exchange failed on received components: {}", g, e.toString());
        }
      });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // closing
    }
  }

  private void tickExchanges() {
    long now = System.nanoTime();
    for (Map.Entry<GroupId, Exchange> e : exchanges.entrySet()) {
      RaftServer.Division d = divisions.apply(e.getKey());
      Exchange x = e.getValue();
      x.leadership(d != null && d.getInfo().isLeader() && d.getInfo().isLeaderReady(), now);
      if (x.isLeader()) {
        x.tick(machines.apply(e.getKey()).view(), now);
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    exchangeRunner.shutdownNow();
  }
}
