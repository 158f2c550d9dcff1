package io.eyrie.multicast.internal.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.internal.Wire.Start;
import io.eyrie.multicast.internal.Wire.StartBatch;
import io.eyrie.multicast.internal.state.SimGroups.Ev;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One seeded run of the simulation: clients start messages to random subsets of groups (each
 * Start submitted to a random nonempty subset of its destinations, sometimes resubmitted), the
 * scheduler interleaves channel shipments with faults, restores from snapshots and leader
 * changes, then everything is drained and the atomic multicast properties are checked
 * ({@link SimChecks}). Replies are checked as they are emitted.
 */
final class SimWorkload implements SimGroups.ReplySink {

  /** What the test knows about one started message. */
  static final class MsgInfo {
    final Start start;
    final int client;
    Ev finalReply;
    int reanswers;
    /** How many Starts of this message were applied, and how many of them were refused EXPIRED. */
    int submitted;
    int expired;

    MsgInfo(Start start, int client) {
      this.start = start;
      this.client = client;
    }

    /**
     * True if every Start of this message was refused because its client had expired at the
     * group it reached (DESIGN Appendix A: error reply): then no group ever learned the message,
     * so it must be delivered nowhere and never answered, and the client knows it failed.
     */
    boolean refusedEverywhere() {
      return submitted > 0 && expired == submitted;
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
  final List<List<Start>> buffers = new ArrayList<>();
  long time = 1_000;
  long token;
  long steps;
  long reanswers;
  long stales;
  long dupsSubmitted;
  long refusals;
  List<Ev> lastEvents = List.of();

  SimWorkload(long seed, int groups, int messages) {
    this(seed, groups, messages, SimGroups.NO_EXPIRY);
  }

  /** With {@code expiryMs} below {@link SimGroups#NO_EXPIRY}, idle clients' records expire (log time). */
  SimWorkload(long seed, int groups, int messages, long expiryMs) {
    this.seed = seed;
    this.rnd = new Random(seed);
    this.n = groups;
    this.messages = messages;
    this.sim = new SimGroups(groups, rnd, expiryMs);
    sim.sink = this;
    int clients = 3;
    clientIds = new long[clients];
    nextSeq = new long[clients];
    lazy = new boolean[clients];
    for (int c = 0; c < clients; c++) {
      clientIds[c] = 0x5eed_0000L + c * 0x1_0001L;
      unfinished.add(new TreeSet<>());
      lazy[c] = c == 0;
    }
    for (int g = 0; g < n; g++) {
      buffers.add(new ArrayList<>());
    }
  }

  long watermark(int c) {
    if (lazy[c]) {
      return 0;
    }
    return unfinished.get(c).isEmpty() ? nextSeq[c] : unfinished.get(c).first();
  }

  /** Runs the random schedule, drains, and checks everything. */
  void run() {
    while (order.size() < messages) {
      step();
    }
    if (!sim.drain(20_000, this::flushAll)) {
      fail("did not converge within 20000 drain rounds; still in flight:" + sim.describe());
    }
    sim.assertQuiescent(msg -> fail(msg + sim.describe()));
    assertTrue(sim.violations.isEmpty(), () -> "application saw violations: " + sim.violations);
    for (int g = 0; g < n; g++) {
      sim.assertReplicasEqual(g, "after the drain");
    }
    SimChecks.check(sim, msgs);
    resubmitFinished();
    sim.assertQuiescent(msg -> fail("after resubmitting finished messages: " + msg));
    for (int g = 0; g < n; g++) {
      sim.assertReplicasEqual(g, "at the end");
    }
  }

  void step() {
    steps++;
    time += rnd.nextInt(4);
    int e = rnd.nextInt(100);
    if (e < 16) {
      newMessage();
    } else if (e < 20 && !order.isEmpty()) {
      duplicate();
    } else if (e < 30) {
      flush(rnd.nextInt(n));
    } else if (e < 31) {
      int g = rnd.nextInt(n);
      int r = rnd.nextInt(SimGroups.REPLICAS);
      sim.restore(g, r);
      if (r == sim.leader[g] && rnd.nextBoolean()) {
        sim.changeLeader(g);
      }
    } else if (e < 33) {
      sim.changeLeader(rnd.nextInt(n));
    } else if (e < 37) {
      int g = rnd.nextInt(n);
      sim.deliverFailure(g, (g + 1 + rnd.nextInt(n - 1)) % n);
    } else if (e < 38) {
      sim.assertReplicasEqual(rnd.nextInt(n), "at step " + steps);
    } else {
      int g = rnd.nextInt(n);
      sim.ship(g, (g + 1 + rnd.nextInt(n - 1)) % n, true, rnd.nextInt(5) == 0);
    }
  }

  void newMessage() {
    int c = rnd.nextInt(clientIds.length);
    long seq = nextSeq[c]++;
    int r = rnd.nextInt(100);
    int k = Math.min(n, r < 30 ? 1 : r < 65 ? 2 : r < 85 ? 3 : n);
    List<Integer> idx = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      idx.add(i);
    }
    Collections.shuffle(idx, rnd);
    GroupId[] dests = new GroupId[k];
    for (int i = 0; i < k; i++) {
      dests[i] = sim.gid(idx.get(i));
    }
    Arrays.sort(dests);
    GroupId reply = dests[rnd.nextInt(k)];
    long mode = rnd.nextInt(3) == 0 ? SimDeliverer.PLAIN : rnd.nextInt(SimDeliverer.MODES);
    byte[] payload = sim.codec.encode(new long[] {++token, mode});
    MsgId id = MsgId.valueOf(clientIds[c], seq, rnd.nextInt(8) == 0 ? 1 : 0);
    unfinished.get(c).add(seq);
    Start s = new Start(id, dests, reply, payload, watermark(c));
    msgs.put(id, new MsgInfo(s, c));
    order.add(id);
    boolean any = false;
    for (GroupId d : dests) {
      if (rnd.nextBoolean()) {
        submit(sim.idx(d), s);
        any = true;
      }
    }
    if (!any) {
      submit(sim.idx(dests[rnd.nextInt(k)]), s);
    }
  }

  /** Resubmits a started message (a client resend or a delayed duplicate) to one destination. */
  void duplicate() {
    MsgInfo mi = msgs.get(order.get(rnd.nextInt(order.size())));
    Start s = mi.start;
    GroupId d = rnd.nextBoolean() ? s.replyGroup() : s.dests()[rnd.nextInt(s.dests().length)];
    submit(sim.idx(d), new Start(s.id(), s.dests(), s.replyGroup(), s.payload(), watermark(mi.client)));
    dupsSubmitted++;
  }

  void submit(int g, Start s) {
    buffers.get(g).add(s);
    if (rnd.nextBoolean()) {
      flush(g);
    }
  }

  void flush(int g) {
    List<Start> b = buffers.get(g);
    if (b.isEmpty() && rnd.nextInt(4) != 0) {
      return;
    }
    Start[] starts = b.toArray(new Start[0]);
    b.clear();
    sim.apply(g, new StartBatch(time + rnd.nextInt(11) - 5, starts));
  }

  void flushAll() {
    for (int g = 0; g < n; g++) {
      if (!buffers.get(g).isEmpty()) {
        flush(g);
      }
    }
  }

  @Override
  public void replies(GroupId g, Object entry, List<Ev> events) {
    lastEvents = events;
    if (entry instanceof StartBatch b) {
      for (Start s : b.starts()) {
        msgs.get(s.id()).submitted++;
      }
    }
    for (Ev ev : events) {
      MsgInfo mi = msgs.get(ev.id());
      if (mi == null) {
        fail(g + " replies for a message that was never started: " + ev.id());
      }
      Status status = ev.reply().status();
      if (status == Status.STALE) {
        assertTrue(mi.finalReply != null, () -> g + " answers STALE for unfinished " + ev.id());
        assertTrue(carries(entry, ev.id()), () -> g + " answers STALE for " + ev.id() + " without a Start of it");
        stales++;
      } else if (status == Status.OK) {
        assertEquals(mi.start.replyGroup(), g, () -> "a reply for " + ev.id() + " from a group other than its reply group");
        if (mi.finalReply == null) {
          mi.finalReply = ev;
          checkStarted(g, mi);
          unfinished.get(mi.client).remove(ev.id().seq());
        } else {
          assertTrue(carries(entry, ev.id()), () -> g + " replies a second time for " + ev.id()
              + " though the entry does not resubmit it");
          assertTrue(ev.same(mi.finalReply), () -> g + " re-answers " + ev.id() + " with another reply");
          mi.reanswers++;
          reanswers++;
        }
      } else if (status == Status.EXPIRED && sim.expiryMs < SimGroups.NO_EXPIRY && carries(entry, ev.id())) {
        refusals++; // DESIGN Appendix A: a Start from an expired client gets an error reply
        mi.expired++;
      } else {
        fail(g + " answers " + ev.id() + " with status " + status + ": " + ev.reply().error());
      }
    }
  }

  private static boolean carries(Object entry, MsgId id) {
    if (entry instanceof StartBatch b) {
      for (Start s : b.starts()) {
        if (s.id().equals(id)) {
          return true;
        }
      }
    }
    return false;
  }

  /** Execution atomicity: the reply is final only once every destination has begun executing. */
  private void checkStarted(GroupId g, MsgInfo mi) {
    for (GroupId d : mi.start.dests()) {
      for (int r = 0; r < SimGroups.REPLICAS; r++) {
        if (!sim.replicas[sim.idx(d)][r].app.hasExecuted(mi.start.id())) {
          fail(g + " releases the reply for " + mi.start.id() + " before " + d + " (replica " + r
              + ") has begun executing it");
        }
      }
    }
  }

  /**
   * After the drain, resubmits finished messages: to the reply group it must re-answer the
   * recorded reply (or STALE once the client's watermark passed it); elsewhere it answers nothing;
   * nowhere is it executed again.
   */
  void resubmitFinished() {
    for (MsgId id : order) {
      MsgInfo mi = msgs.get(id);
      if (mi.refusedEverywhere()) {
        continue; // never started: a resubmission would be a new message, not a finished one
      }
      Start s = mi.start;
      int d = sim.idx(rnd.nextInt(3) == 0 ? s.dests()[rnd.nextInt(s.dests().length)] : s.replyGroup());
      ClientTable.ClientRecord rec = sim.lead(d).clients.get(id.client());
      // The client's record expired at d (a record recreated since by a proposal only knows the
      // messages learned after that): d cannot tell whether it executed the message, so it must
      // refuse it EXPIRED.
      boolean expiredHere = sim.lead(d).clients.tombstones.containsKey(id.client())
          && (rec == null || !rec.delivered.contains(id));
      long wm = watermark(mi.client);
      boolean stale = rec != null && id.seq() < Math.max(rec.watermark, wm);
      int executed = ((SimDeliverer) sim.lead(d).app()).delivered().size();
      sim.apply(d, new StartBatch(time, new Start[] {new Start(id, s.dests(), s.replyGroup(), s.payload(), wm)}));
      List<Ev> evs = lastEvents;
      if (expiredHere) {
        assertTrue(evs.size() == 1 && evs.get(0).reply().status() == Status.EXPIRED,
            () -> "a resubmitted " + id + " of a client expired at " + sim.gid(d) + " must be refused EXPIRED, got "
                + evs);
      } else if (rec == null) {
        // The client's record and its tombstone expired here: it may be refused, never executed again.
        assertTrue(evs.size() <= 1, () -> "a resubmitted " + id + " of an expired client answers " + evs);
      } else if (stale) {
        assertTrue(evs.size() == 1 && evs.get(0).reply().status() == Status.STALE,
            () -> "a resubmitted " + id + " below the watermark must be answered STALE, got " + evs);
      } else if (sim.gid(d).equals(s.replyGroup())) {
        assertTrue(evs.size() == 1 && evs.get(0).same(mi.finalReply),
            () -> "a resubmitted finished " + id + " must be re-answered with its reply, got " + evs);
      } else {
        assertTrue(evs.isEmpty(), () -> "a resubmitted " + id + " at a non-reply group answers " + evs);
      }
      assertEquals(0, sim.lead(d).pendingCount(), () -> "a resubmitted finished " + id + " became pending again");
      assertEquals(executed, ((SimDeliverer) sim.lead(d).app()).delivered().size(),
          () -> "a resubmitted finished " + id + " was executed again");
    }
  }
}
