package io.eyrie.multicast.internal.state;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.internal.Wire.Start;
import io.eyrie.multicast.internal.replication.Exchange;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One seeded run of the simulation of design 4.3.1: clients multicast to random subsets of
 * groups through a random node (rule 1: the Start goes to every destination; sometimes only to
 * some, a client crash after a partial submit, B3ii; sometimes resent, through another node);
 * the scheduler advances the simulated clock and interleaves submissions, the leaders' exchanges,
 * the unlogged network, channel shipments, lagging followers, snapshots and restores, and leader
 * changes (with deposed leaders still pushing). Then it heals the faults, drains, and checks
 * ({@link SimChecks}) the released replies and the replicas.
 */
final class SimWorkload implements SimGroups.ReleaseSink {

  /** What the test knows about one started message. */
  static final class MsgInfo {
    final Start start;
    final int client;
    /** Logical time of the client's invocation. */
    final long invokedAt;
    StoredReply finalReply;
    long releasedAt = Long.MAX_VALUE;
    int releases;
    boolean partial;
    /** The client gave up on it (raised its watermark past it without a reply). */
    boolean abandoned;

    MsgInfo(Start start, int client, long invokedAt) {
      this.start = start;
      this.client = client;
      this.invokedAt = invokedAt;
    }

    /** Never started anywhere (no expiry in these schedules): always false here. */
    boolean refusedEverywhere() {
      return false;
    }
  }

  final long seed;
  final Random rnd;
  final SimGroups sim;
  final int n;
  final int messages;
  final long[] clientIds;
  final long[] nextSeq;
  final List<TreeSet<Long>> unfinished = new ArrayList<>();
  /** A lazy client never advances its watermark, so its old messages can be re-answered. */
  final boolean[] lazy;
  final TreeMap<MsgId, MsgInfo> msgs = new TreeMap<>();
  final List<MsgId> order = new ArrayList<>();
  long token;
  long steps;
  long resends;
  long partials;
  long stales;
  /** Whether a release checks at once that every destination began the message (off: the real-time check must catch it). */
  boolean checkBegunAtRelease = true;
  /** Per cent of multi-group messages submitted to only some destinations. */
  int partialPct = 8;
  /** Per mille of steps that change a leader. */
  int leaderChangePermille = 10;

  SimWorkload(long seed, int groups, int messages) {
    this(seed, groups, messages, SimGroups.NO_EXPIRY);
  }

  SimWorkload(long seed, int groups, int messages, long expiryMs) {
    this.seed = seed;
    this.rnd = new Random(seed);
    this.n = groups;
    this.messages = messages;
    this.sim = new SimGroups(groups, rnd, expiryMs);
    sim.sink = this;
    sim.destsOf = id -> {
      MsgInfo mi = msgs.get(id);
      return mi == null ? null : mi.start.dests();
    };
    int clients = 3;
    clientIds = new long[clients];
    nextSeq = new long[clients];
    lazy = new boolean[clients];
    for (int c = 0; c < clients; c++) {
      clientIds[c] = 0x5eed_0000L + c * 0x1_0001L;
      unfinished.add(new TreeSet<>());
      lazy[c] = c == 0;
    }
  }

  long watermark(int c) {
    if (lazy[c]) {
      return 0;
    }
    return unfinished.get(c).isEmpty() ? nextSeq[c] : unfinished.get(c).first();
  }

  /** Runs the random schedule, heals, drains, and checks everything. */
  void run() {
    while (order.size() < messages) {
      step();
    }
    finish();
  }

  /** Heals every fault, drains, and checks. */
  void finish() {
    heal();
    drainOrFail();
    SimChecks.check(sim, msgs);
  }

  /** No more faults: no loss, no duplicates, no lost batches, deposed leaders silent. */
  void heal() {
    SimGroups.Knobs k = sim.knobs;
    k.netLossPct = 0;
    k.netDupPct = 0;
    k.netMaxDelay = 2 * SimGroups.MS;
    k.batchLossPct = 0;
    k.batchDupPct = 0;
    k.channelFaults = false;
    sim.loseBatch = g -> false;
    for (int g = 0; g < n; g++) {
      sim.silenceDeposed(g);
    }
  }

  void drainOrFail() {
    String left = drain(3_000);
    if (left != null) {
      fail("liveness: did not converge after healing: " + left + sim.describe());
    }
    assertTrue(sim.violations.isEmpty(), () -> "violations: " + sim.violations);
  }

  /** Runs without faults until quiescent; returns what is left, or null. */
  String drain(int maxRounds) {
    String left = null;
    for (int round = 0; round < maxRounds; round++) {
      round();
      left = sim.notQuiescent();
      if (left == null) {
        return null;
      }
    }
    return left;
  }

  /** One round of 10 ms without faults of the schedule's own: submit, tick, deliver, ship, catch up. */
  void round() {
    sim.now += 10 * SimGroups.MS;
    for (int g = 0; g < n; g++) {
      sim.submit(g, false);
      sim.tick(g);
    }
    sim.tickGates();
    sim.deliverNetwork();
    for (int g = 0; g < n; g++) {
      sim.submit(g, false);
    }
    for (int g = 0; g < n; g++) {
      for (int h = 0; h < n; h++) {
        if (g != h) {
          while (sim.ship(g, h, false)) {
            // until the channel is drained and acknowledged
          }
        }
      }
    }
    sim.catchUpAll();
  }

  /** {@code k} rounds. */
  void rounds(int k) {
    for (int i = 0; i < k; i++) {
      round();
    }
  }

  void step() {
    steps++;
    sim.now += rnd.nextInt(5) * SimGroups.MS + rnd.nextInt(1000);
    sim.deliverNetwork();
    int lc = leaderChangePermille;
    int e = rnd.nextInt(1000 + lc);
    if (e < 150) {
      if (rnd.nextInt(25) == 0) {
        // A burst at the hot group g0: its clock runs ahead (the schedule of H12 needs it).
        for (int i = 0; i < 8; i++) {
          newMessage(rnd.nextInt(clientIds.length), new GroupId[] {sim.gid(0)}, sim.gid(0), SimDeliverer.PLAIN, false,
              rnd.nextInt(SimGroups.REPLICAS));
        }
        sim.submit(0, true);
      } else {
        newMessage();
      }
    } else if (e < 190 && !order.isEmpty()) {
      resend();
    } else if (e < 330) {
      sim.submit(rnd.nextInt(n), true);
    } else if (e < 480) {
      sim.tick(rnd.nextInt(n));
    } else if (e < 520) {
      sim.tickGates();
    } else if (e < 780) {
      int g = rnd.nextInt(n);
      sim.ship(g, (g + 1 + rnd.nextInt(n - 1)) % n, sim.knobs.channelFaults);
    } else if (e < 900) {
      SimGroups.Group gr = sim.grp[rnd.nextInt(n)];
      SimGroups.Replica r = gr.reps[rnd.nextInt(SimGroups.REPLICAS)];
      sim.catchUp(r, r.applied + 1 + rnd.nextInt(6));
    } else if (e < 900 + leaderChangePermille) {
      sim.changeLeader(rnd.nextInt(n));
    } else if (e < 925 + lc) {
      int g = rnd.nextInt(n);
      sim.restore(g, rnd.nextInt(SimGroups.REPLICAS), rnd.nextInt(3));
    } else if (e < 950 + lc) {
      sim.takeSnapshot(rnd.nextInt(n));
    } else if (e < 965 + lc) {
      sim.silenceDeposed(rnd.nextInt(n));
    } else if (e < 975 + lc) {
      sim.assertReplicasEqual(rnd.nextInt(n), "at step " + steps);
    }
  }

  /** A new message from a random client through a random node. */
  MsgInfo newMessage() {
    int r = rnd.nextInt(100);
    int k = Math.min(n, r < 30 ? 1 : r < 65 ? 2 : r < 85 ? 3 : n);
    List<Integer> idx = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      idx.add(i);
    }
    Collections.shuffle(idx, rnd);
    if (k == 1 && rnd.nextBoolean()) {
      idx.set(0, 0); // g0 is a hot group: its clock runs ahead of the others' (real time needs the gate then)
    }
    GroupId[] dests = new GroupId[k];
    for (int i = 0; i < k; i++) {
      dests[i] = sim.gid(idx.get(i));
    }
    Arrays.sort(dests);
    long mode = rnd.nextInt(3) == 0 ? SimDeliverer.PLAIN : rnd.nextInt(SimDeliverer.MODES);
    return newMessage(rnd.nextInt(clientIds.length), dests, dests[rnd.nextInt(k)], mode,
        k > 1 && rnd.nextInt(100) < partialPct, rnd.nextInt(SimGroups.REPLICAS));
  }

  /** A new message: submitted to every destination (or, {@code partial}, to some), waited for at {@code node}. */
  MsgInfo newMessage(int c, GroupId[] dests, GroupId reply, long mode, boolean partial, int node) {
    long seq = nextSeq[c]++;
    byte[] payload = sim.codec.encode(new long[] {++token, mode});
    MsgId id = MsgId.valueOf(clientIds[c], seq, 0);
    unfinished.get(c).add(seq);
    Start s = new Start(id, dests, reply, payload, watermark(c));
    MsgInfo mi = new MsgInfo(s, c, ++sim.logical);
    msgs.put(id, mi);
    order.add(id);
    sim.waitAt(sim.idx(reply), node, id);
    if (partial) {
      mi.partial = true;
      partials++;
      List<GroupId> some = new ArrayList<>(Arrays.asList(dests));
      Collections.shuffle(some, rnd);
      int keep = 1 + rnd.nextInt(dests.length - 1);
      for (GroupId d : some.subList(0, keep)) {
        sim.grp[sim.idx(d)].starts.add(s);
      }
    } else {
      for (GroupId d : dests) {
        sim.grp[sim.idx(d)].starts.add(s);
      }
    }
    return mi;
  }

  /** The client gives up on a message: its watermark may pass it; no reply is owed. */
  void abandon(MsgInfo mi) {
    mi.abandoned = true;
    unfinished.get(mi.client).remove(mi.start.id().seq());
  }

  /** A client resends a message through a node (maybe another one): a duplicate Start under the same id. */
  void resend() {
    MsgInfo mi = msgs.get(order.get(rnd.nextInt(order.size())));
    if (mi.finalReply != null && !lazy[mi.client]) {
      return; // the client has its reply and moved on
    }
    resend(mi, rnd.nextInt(SimGroups.REPLICAS), rnd.nextBoolean());
  }

  void resend(MsgInfo mi, int node, boolean everywhere) {
    Start s = mi.start;
    Start again = new Start(s.id(), s.dests(), s.replyGroup(), s.payload(), watermark(mi.client));
    resends++;
    if (mi.finalReply == null) {
      sim.waitAt(sim.idx(s.replyGroup()), node, s.id());
    }
    for (GroupId d : everywhere ? s.dests() : new GroupId[] {s.replyGroup()}) {
      sim.grp[sim.idx(d)].starts.add(again);
    }
  }

  @Override
  public void released(int g, int node, MsgId id, StoredReply reply) {
    MsgInfo mi = msgs.get(id);
    if (mi == null) {
      fail(sim.gid(g) + " releases a reply for a message that was never started: " + id);
    }
    Status status = reply.status();
    if (status == Status.STALE) {
      if (mi.finalReply == null) {
        fail(sim.gid(g) + " answers STALE for unfinished " + id);
      }
      stales++;
      return;
    }
    if (status != Status.OK && status != Status.ERROR) {
      fail(sim.gid(g) + " answers " + id + " with " + status + ": " + reply.error());
    }
    if (!sim.gid(g).equals(mi.start.replyGroup())) {
      fail("a reply for " + id + " from " + sim.gid(g) + ", not its reply group");
    }
    mi.releases++;
    if (mi.finalReply == null) {
      mi.finalReply = reply;
      mi.releasedAt = sim.logical;
      unfinished.get(mi.client).remove(id.seq());
      sim.waiters.remove(id); // the client has its answer and stops waiting elsewhere
      for (SimGroups.Replica r : sim.grp[g].reps) {
        r.gate.remove(id);
      }
      if (checkBegunAtRelease && status == Status.OK && mi.start.dests().length > 1) {
        for (GroupId d : mi.start.dests()) {
          boolean begun = sim.everStarted.get(sim.idx(d)).contains(id);
          for (SimGroups.Replica r : sim.grp[sim.idx(d)].reps) {
            begun |= !(r.state.app() instanceof SimDeliverer);
          }
          if (!begun) {
            fail("real time: the reply of " + id + " is released before any replica of " + d + " began it; it said"
                + " started: " + sim.evidence.get(d + " " + id) + "; its leader now: " + sim.grp[sim.idx(d)].lead().state
                .describe(id));
          }
        }
      }
    } else if (status != mi.finalReply.status() || !Arrays.equals(reply.body(), mi.finalReply.body())) {
      fail("exactly-once: " + id + " answered twice with different replies");
    }
  }

  /** The simulated time's unit of the exchange, for schedules. */
  static long tPull() {
    return Exchange.T_PULL_NANOS;
  }
}
