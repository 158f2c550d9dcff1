package io.eyrie.multicast;

import io.eyrie.multicast.internal.transport.RatisSupport;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.TransferLeadershipRequest;
import org.apache.ratis.server.DivisionInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the leaders of a node's groups go. Leaders spread over the nodes: each group has a
 * preferred node (RatisSupport.preferredLeader, rotated by group), and a node that leads a group
 * preferred elsewhere hands it over, at once after start-up, and once a preferred node that was
 * silent for a while (down, restarted, started late) has kept up for
 * {@link #HAND_BACK_SETTLE_NANOS}. Before a planned shutdown, a node hands off every group it
 * leads ({@link #handOff}). Done with Ratis's leadership transfer rather than Ratis priorities:
 * with priorities, Ratis refuses to transfer leadership to a lower-priority member, which a node
 * shutting down must be able to do.
 */
final class LeaderBalancer {
  private static final Logger LOG = LoggerFactory.getLogger(LeaderBalancer.class);

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

  private final int nodeId;
  private final GroupHost host;
  private final Predicate<GroupId> isLeader;
  /** True once the node stops: no more balancing. */
  private final BooleanSupplier stopping;
  private final ScheduledExecutorService balancer = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "eyrie-leader-balance");
    t.setDaemon(true);
    return t;
  });
  private final Map<GroupId, Long> nextBalance = new ConcurrentHashMap<>();
  /**
   * For each group this node leads whose preferred node was seen down: since when (nanoTime) it
   * has kept up again, or {@code Long.MIN_VALUE} while it has not.
   */
  private final Map<GroupId, Long> absentSince = new ConcurrentHashMap<>();

  LeaderBalancer(int nodeId, GroupHost host, Predicate<GroupId> isLeader, BooleanSupplier stopping) {
    this.nodeId = nodeId;
    this.host = host;
    this.isLeader = isLeader;
    this.stopping = stopping;
  }

  /** Starts balancing, once a second. */
  void start() {
    balancer.scheduleWithFixedDelay(this::balanceLeaders, 1, 1, TimeUnit.SECONDS);
  }

  /** Stops balancing. */
  void close() {
    balancer.shutdownNow();
  }

  /**
   * Hands off the leadership of every group this node leads to another member (see
   * {@link Node#handOffLeadership}).
   *
   * @return the groups this node led and no longer leads
   */
  List<GroupId> handOff(Duration timeout) {
    List<GroupId> led = new ArrayList<>();
    for (GroupId g : host.groups()) {
      if (isLeader.test(g)) {
        led.add(g);
      }
    }
    List<CompletableFuture<Boolean>> moves = new ArrayList<>();
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
    List<GroupId> moved = new ArrayList<>();
    for (int i = 0; i < led.size(); i++) {
      if (moves.get(i).join()) {
        moved.add(led.get(i));
      }
    }
    return moved;
  }

  private boolean transfer(GroupId g, Duration timeout) {
    List<Integer> members = host.cluster().group(g).members();
    int self = members.indexOf(nodeId);
    // Members after this one first, in ring order, so that handoffs from different nodes spread.
    for (int k = 1; k < members.size(); k++) {
      int to = members.get((self + k) % members.size());
      try {
        RaftClientReply r = transferTo(g, to, timeout.toMillis());
        if (r.isSuccess()) {
          LOG.info("node {}: handed the leadership of {} to node {}", nodeId, g, to);
          return true;
        }
        LOG.info("node {}: node {} did not take the leadership of {}: {}", nodeId, to, g, r.getException());
      } catch (IOException | RuntimeException e) {
        LOG.info("node {}: node {} did not take the leadership of {}: {}", nodeId, to, g, e.toString());
      }
      if (!isLeader.test(g)) {
        return true;
      }
    }
    return false;
  }

  private RaftClientReply transferTo(GroupId g, int to, long timeoutMs) throws IOException {
    return host.server().transferLeadership(new TransferLeadershipRequest(ClientId.randomId(),
        RatisSupport.peerId(nodeId), RatisSupport.raftGroupId(g), 0, RatisSupport.peerId(to), timeoutMs));
  }

  private void balanceLeaders() {
    for (GroupId g : host.groups()) {
      int preferred = RatisSupport.preferredLeader(host.cluster(), g);
      long now = System.nanoTime();
      if (!stopping.getAsBoolean() && preferred != nodeId && !isLeader.test(g)) {
        absentSince.remove(g); // what this node saw as leader no longer holds
      }
      if (stopping.getAsBoolean() || preferred == nodeId || !isLeader.test(g) || now < nextBalance.getOrDefault(g, 0L)) {
        continue;
      }
      if (!readyToLead(g, preferred, now)) {
        continue;
      }
      try {
        RaftClientReply r = transferTo(g, preferred, 3000);
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
      DivisionInfo info = host.division(g).getInfo();
      if (!info.isLeader()) {
        return false;
      }
      long[] match = info.getFollowerMatchIndices();
      var followers = info.getRoleInfoProto().getLeaderInfo().getFollowerInfoList();
      long applied = info.getLastAppliedIndex();
      int i = 0;
      while (i < followers.size() && i < match.length
          && RatisSupport.nodeId(RaftPeerId.valueOf(followers.get(i).getId().getId())) != to) {
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
}
