package io.eyrie.multicast.internal.state;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.CodecRegistry;
import io.eyrie.multicast.Deliverer;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.internal.Wire.ChannelBatch;
import io.eyrie.multicast.internal.Wire.Component;
import io.eyrie.multicast.internal.Wire.Decision;
import io.eyrie.multicast.internal.Wire.Forward;
import io.eyrie.multicast.internal.Wire.Propose;
import io.eyrie.multicast.internal.Wire.Start;
import io.eyrie.multicast.internal.Wire.StartBatch;
import io.eyrie.multicast.internal.replication.Exchange;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * The mechanics of the deterministic simulation of design 4.3.1 (issue 25, step 1): N groups of
 * {@link #REPLICAS} replicas of the real {@link GroupState}, each group a log of committed entries
 * that its replicas apply at their own pace (the leader at once, followers later: a lagging
 * follower, or a lagging new leader); replicas restarted or restored from current or older
 * snapshots; per group, the current leader's real {@link Exchange} (a new one at each leader
 * change), and deposed leaders' exchanges that may keep pushing; an unlogged network between
 * groups carrying components (push, and the receiver's {@link Exchange#answer} back into the
 * sender's {@code received}) and StartedQuery/answers, with loss, duplication, reordering and
 * delay, answered by the receiving group's leader or by a follower; the leaders' decisions and
 * forwards riding the group's next {@link StartBatch} (sometimes lost, sometimes appended twice);
 * go-back-N channels that ship every outbox (lazy {@code Decided} items too); and the per-replica
 * reply gate of rule 11 (a multi-group reply is released only after a StartedQuery to every other
 * destination was answered positively). A simulated clock in nanoseconds; no threads, no wall
 * clock.
 *
 * <p>While it runs it records what the checks of {@link SimChecks} need: the released replies
 * (with a logical release time), each group's decisions, every drop from the retention table,
 * and any violation of a rule seen on the way (a decision that disagrees with a group's log, a
 * {@code Propose} that hits a dropped message, replicas that differ at equal log prefixes).
 */
public final class SimGroups {
  /** Large enough that no client record ever expires in the simulation. */
  static final long NO_EXPIRY = 1L << 40;
  static final int REPLICAS = 3;
  static final long MS = 1_000_000L;

  /** One reply emitted by a replica's listener. */
  public record Ev(MsgId id, StoredReply reply) {
    boolean same(Ev o) {
      return id.equals(o.id) && reply.status() == o.reply.status() && Arrays.equals(reply.body(), o.reply.body())
          && Objects.equals(reply.error(), o.reply.error());
    }
  }

  /** Receives every reply a gate releases to a client. */
  interface ReleaseSink {
    void released(int g, int node, MsgId id, StoredReply reply);
  }

  /** Faults and switches of the schedule; the positive controls weaken one rule each. */
  static final class Knobs {
    /** Unlogged messages: per cent lost, duplicated; the largest delay. */
    int netLossPct = 10;
    int netDupPct = 5;
    long netMaxDelay = 20 * MS;
    /** Per cent of unlogged messages answered by a follower (which may lag) instead of the leader. */
    int followerPct = 20;
    /** A leader's start batch: per cent lost (no leader change, K1), and per cent appended twice (Ratis retry). */
    int batchLossPct = 10;
    int batchDupPct = 5;
    /** Channel faults (duplicates, gaps, lost batches). */
    boolean channelFaults = true;
    /** Per cent of a deposed leader's decisions and forwards that still reach the log. */
    int deposedAppendPct = 50;
    /** Control "release at decision": the gate releases without any StartedQuery (H12). */
    boolean gateSkipsQueries;
    /** Control "no Decide re-append" (K1): an exchange's decision of a message goes to the log once only. */
    boolean decideOnce;
    /**
     * Control "deliver on a missing component": a leader that lacks some destination's component
     * for {@code T_fwd} logs a decision with a made-up timestamp for it.
     */
    boolean inventMissing;
    /** Control "predict the own lts" (H7): with a new start, a leader logs a decision with clock+1 for it. */
    boolean predictOwn;
  }

  /** A held reply at a replica's gate (rule 11). */
  static final class Held {
    final MsgId id;
    final GroupId[] dests;
    final StoredReply reply;
    final TreeSet<GroupId> started = new TreeSet<>();
    long lastAsk = Long.MIN_VALUE;
    int asks;

    Held(MsgId id, GroupId[] dests, StoredReply reply) {
      this.id = id;
      this.dests = dests;
      this.reply = reply;
    }
  }

  final class Replica {
    final int g;
    final int k;
    GroupState state;
    SimDeliverer app;
    /** Entries of the group's log applied here. */
    int applied;
    /** A follower that applies nothing until unfrozen (a lagging replica). */
    boolean frozen;
    final List<Ev> events = new ArrayList<>();
    /** The gate of this replica: replies held for clients waiting here. */
    final TreeMap<MsgId, Held> gate = new TreeMap<>();

    Replica(int g, int k) {
      this.g = g;
      this.k = k;
      app = new SimDeliverer(violations::add);
      app.onStart = id -> everStarted.get(g).add(id);
      state = new GroupState(gid(g), groups, appFactory == null ? app : appFactory.get(), codec, expiryMs);
      attach();
    }

    Deliverer deliverer() {
      return state.app();
    }

    void attach() {
      state.setListener(new StateListener() {
        @Override
        public void reply(MsgId id, StoredReply reply) {
          events.add(new Ev(id, reply));
          offer(Replica.this, id, reply);
        }

        @Override
        public void outboxChanged(GroupId to) {
          outboxWakeups++;
        }

        @Override
        public void undecided(MsgId id) {
          Group gr = grp[g];
          if (gr.leader == k && gr.ex != null) {
            gr.ex.ex.pending(id);
          }
        }
      });
    }
  }

  /** A leader's exchange, bound to the replica whose applied state it reads. */
  final class Ex implements Exchange.Net {
    final int g;
    final Replica rep;
    final Exchange ex;
    boolean deposed;
    final TreeSet<MsgId> decidedOnce = new TreeSet<>();

    Ex(int g, Replica rep) {
      this.g = g;
      this.rep = rep;
      this.ex = new Exchange(gid(g), this);
    }

    Exchange.View view() {
      return Exchange.viewOf(rep.state);
    }

    @Override
    public void send(GroupId to, List<Component> list) {
      componentsSent++;
      if (deposed) {
        deposedSends++;
      }
      net(new Packet(Kind.PUSH, g, rep, idx(to), List.copyOf(list), this, null));
    }

    @Override
    public void decide(Decision d) {
      if (knobs.decideOnce && !decidedOnce.add(d.id())) {
        return;
      }
      if (deposed && rnd.nextInt(100) >= knobs.deposedAppendPct) {
        return;
      }
      decisionsSubmitted++;
      grp[g].decides.add(d);
    }

    @Override
    public void forward(Forward f) {
      if (deposed && rnd.nextInt(100) >= knobs.deposedAppendPct) {
        return;
      }
      forwardsSubmitted++;
      grp[g].forwards.add(f);
    }
  }

  final class Group {
    final int i;
    final List<Object> log = new ArrayList<>();
    final List<byte[]> bytes = new ArrayList<>();
    /** The replies entry i made the first replica that applied it emit. */
    final List<List<Ev>> repliesAt = new ArrayList<>();
    /** Snapshots of this group's state at a log index, by index (for restores from older snapshots). */
    final TreeMap<Integer, byte[]> snapshots = new TreeMap<>();
    final Replica[] reps = new Replica[REPLICAS];
    int leader;
    Ex ex;
    final List<Ex> deposed = new ArrayList<>();
    final List<Start> starts = new ArrayList<>();
    final List<Decision> decides = new ArrayList<>();
    final List<Forward> forwards = new ArrayList<>();
    /** Recorded at the first replica to apply each entry: decisions (id -> V) and retention. */
    final TreeMap<MsgId, Decision> decisions = new TreeMap<>();
    final TreeMap<MsgId, Long> retained = new TreeMap<>();
    final TreeMap<MsgId, Long> dropped = new TreeMap<>();

    Group(int i) {
      this.i = i;
      for (int k = 0; k < REPLICAS; k++) {
        reps[k] = new Replica(i, k);
      }
    }

    Replica lead() {
      return reps[leader];
    }
  }

  enum Kind { PUSH, ANSWER, QUERY, QANSWER }

  /** An unlogged message between nodes. */
  final class Packet {
    final Kind kind;
    final int from;
    final Replica fromRep;
    final int to;
    final List<Component> comps;
    final Ex ex;
    final MsgId[] ids;
    long at;
    long seq;
    /** For a query: the replica of the target asked (-1: the leader). */
    int target = -1;

    Packet(Kind kind, int from, Replica fromRep, int to, List<Component> comps, Ex ex, MsgId[] ids) {
      this.kind = kind;
      this.from = from;
      this.fromRep = fromRep;
      this.to = to;
      this.comps = comps;
      this.ex = ex;
      this.ids = ids;
    }
  }

  final Random rnd;
  final Codec codec = new Codec(CodecRegistry.empty());
  final List<GroupId> groups = new ArrayList<>();
  final int n;
  final long expiryMs;
  final Group[] grp;
  /** Per group, every message a replica of it started (so the group's log started it). */
  final List<java.util.Set<MsgId>> everStarted = new ArrayList<>();
  final Knobs knobs = new Knobs();
  final List<String> violations = new ArrayList<>();
  /** Per group, the own lts a predicting leader assumed for its new starts (control predictOwn). */
  final List<TreeMap<MsgId, Long>> predicted = new ArrayList<>();
  /** A custom application for every replica built from now on (null: a {@link SimDeliverer}). */
  Supplier<Deliverer> appFactory;
  /** Which clients wait at which replica (group, node) for which message. */
  final TreeMap<MsgId, TreeSet<Integer>> waiters = new TreeMap<>();
  ReleaseSink sink = (g, k, id, r) -> {};
  long now = 1_000 * MS;
  /** Logical time of releases and client invocations. */
  long logical;
  final PriorityQueue<Packet> network = new PriorityQueue<>((a, b) -> a.at != b.at ? Long.compare(a.at, b.at)
      : Long.compare(a.seq, b.seq));
  long netSeq;
  /** Per ordered pair [from][to]: the sender's cursor. */
  final long[][] sent;
  /** Channels the schedule holds back (from, to). */
  java.util.function.BiPredicate<Integer, Integer> channelBlocked = (g, h) -> false;
  /** The replica of group h a gate's query goes to on its attempt (or -1 for the default); null: the default. */
  java.util.function.IntBinaryOperator queryTarget;
  /** Groups no unlogged message reaches. */
  java.util.function.IntPredicate unreachable = g -> false;
  /** Groups without a leader: nothing is appended to their logs. */
  final boolean[] leaderless;
  /** Proposes applied, per group and message. */
  final TreeMap<MsgId, int[]> proposesAt = new TreeMap<>();
  long deposedSends;
  /** For diagnosis: the first replica of a group that answered "started" for a message, and what it held. */
  final TreeMap<String, String> evidence = new TreeMap<>();
  /** Times a state told its listener an outbox changed (lazy items must not). */
  long outboxWakeups;
  /** A predicate the scheduler can set to lose a whole batch at submission (named schedules). */
  java.util.function.IntPredicate loseBatch = g -> false;
  /** Log times: per group, the largest StartBatch time appended. */
  long entriesApplied;
  long restores;
  long batchesLost;
  long batchesDoubled;
  long gapsAndDups;
  long componentsSent;
  long decisionsSubmitted;
  long forwardsSubmitted;
  long queriesSent;
  long proposesApplied;
  long leaderChanges;

  SimGroups(int n, Random rnd, long expiryMs) {
    this.n = n;
    this.rnd = rnd;
    this.expiryMs = expiryMs;
    for (int i = 0; i < n; i++) {
      groups.add(GroupId.valueOf("g" + i));
    }
    for (int i = 0; i < n; i++) {
      everStarted.add(new java.util.HashSet<>());
    }
    grp = new Group[n];
    for (int i = 0; i < n; i++) {
      grp[i] = new Group(i);
      predicted.add(new TreeMap<>());
    }
    for (int i = 0; i < n; i++) {
      newExchange(i);
    }
    sent = new long[n][n];
    leaderless = new boolean[n];
  }

  GroupId gid(int i) {
    return groups.get(i);
  }

  int idx(GroupId g) {
    return groups.indexOf(g);
  }

  GroupState lead(int g) {
    return grp[g].lead().state;
  }

  Replica rep(int g, int k) {
    return grp[g].reps[k];
  }

  private void newExchange(int g) {
    Group gr = grp[g];
    gr.ex = new Ex(g, gr.lead());
    gr.ex.ex.leadership(true, now);
  }

  // ---------------------------------------------------------------- the log

  /** Appends an entry to a group's log (committed) and applies it at the leader. */
  void append(int g, Object entry) {
    Group gr = grp[g];
    gr.log.add(entry);
    gr.bytes.add(codec.encode(entry));
    catchUp(gr.lead(), gr.log.size());
    flushExchange(g);
  }

  /** Applies the group's log at a replica up to {@code upTo} entries. */
  void catchUp(Replica r, int upTo) {
    Group gr = grp[r.g];
    if (r.frozen && gr.leader != r.k) {
      return;
    }
    while (r.applied < Math.min(upTo, gr.log.size())) {
      applyNext(r);
    }
  }

  private void applyNext(Replica r) {
    Group gr = grp[r.g];
    int i = r.applied;
    boolean first = gr.repliesAt.size() == i;
    Object entry = first ? gr.log.get(i) : codec.decode(gr.bytes.get(i));
    if (first) {
      checkBeforeApply(gr, r.state, entry);
    }
    r.events.clear();
    r.state.apply(entry);
    r.applied++;
    entriesApplied++;
    if (first) {
      gr.repliesAt.add(new ArrayList<>(r.events));
      afterFirstApply(gr, r.state);
    } else {
      List<Ev> want = gr.repliesAt.get(i);
      boolean same = want.size() == r.events.size();
      for (int j = 0; same && j < want.size(); j++) {
        same = want.get(j).same(r.events.get(j));
      }
      if (!same) {
        violations.add(gid(r.g) + " replica " + r.k + " emits other replies for entry " + i + ": " + r.events
            + " vs " + want);
      }
    }
    byte[] snap = gr.snapshots.get(r.applied);
    if (snap != null && !Arrays.equals(snap, snapshot(r.state))) {
      violations.add(gid(r.g) + " replica " + r.k + " differs at log prefix " + r.applied
          + " from the snapshot another replica wrote there");
    }
  }

  /** Rule checks on an entry, before the first replica applies it. */
  private void checkBeforeApply(Group gr, GroupState s, Object entry) {
    TreeSet<MsgId> decidedHere = new TreeSet<>();
    if (entry instanceof StartBatch b) {
      for (Decision d : b.decides()) {
        io.eyrie.multicast.internal.state.Msg m = s.order.get(d.id());
        if (m != null && m.finalTs < 0 && d.tsOf(s.self()) != m.localTs
            && Arrays.equals(m.start.dests(), d.groups())) {
          violations.add(s.self() + " logs a decision of " + d.id() + " with its own timestamp " + d.tsOf(s.self())
              + " but applied " + m.localTs + " (H7)");
        }
        recordDecision(gr, s, d, decidedHere);
      }
    } else if (entry instanceof ChannelBatch b) {
      long[] pos = s.channelPositions(b.from());
      long next = pos == null ? -1 : pos[2];
      for (int j = 0; j < b.items().length; j++) {
        if (b.firstSeq() + j != next) {
          continue;
        }
        next++;
        if (b.items()[j] instanceof io.eyrie.multicast.internal.Wire.Decided dd) {
          recordDecision(gr, s, dd.decision(), decidedHere);
        }
        if (b.items()[j] instanceof Propose p) {
          proposesApplied++;
          proposesAt.computeIfAbsent(p.start().id(), x -> new int[n])[gr.i]++;
          Long d = gr.dropped.get(p.start().id());
          if (d != null && d == p.start().digest()) {
            violations.add(s.self() + " applies a Propose of " + p.start().id() + " from " + b.from()
                + " after it dropped that version from retention (rule 8)");
          }
        }
      }
    }
  }

  /**
   * Records the decision that will decide a message at this group: the first one of the entry
   * that finds it pending and undecided and agrees with the log (rule 6), with the conflict flag
   * the group will hold.
   */
  private void recordDecision(Group gr, GroupState s, Decision d, TreeSet<MsgId> decidedHere) {
    io.eyrie.multicast.internal.state.Msg m = s.order.get(d.id());
    if (m == null || m.finalTs >= 0 || !decidedHere.add(d.id()) || !Arrays.equals(m.start.dests(), d.groups())
        || d.tsOf(s.self()) != m.localTs) {
      return;
    }
    boolean conflict = d.conflict() || m.conflict || d.digest() != m.start.digest();
    Decision old = gr.decisions.put(d.id(), new Decision(d.id(), d.groups(), d.ts(), d.digest(), conflict));
    if (old != null) {
      violations.add(s.self() + " decided " + d.id() + " twice");
    }
  }

  /** Bookkeeping after the first replica applied an entry: retention drops. */
  private void afterFirstApply(Group gr, GroupState s) {
    for (Map.Entry<MsgId, Retention.Entry> e : s.retention.entries.entrySet()) {
      gr.retained.put(e.getKey(), e.getValue().digest);
    }
    if (gr.retained.size() != s.retention.entries.size()) {
      for (var it = gr.retained.entrySet().iterator(); it.hasNext(); ) {
        var e = it.next();
        if (!s.retention.entries.containsKey(e.getKey())) {
          gr.dropped.put(e.getKey(), e.getValue());
          it.remove();
        }
      }
    }
  }

  static byte[] snapshot(GroupState s) {
    Output out = new Output(4096, -1);
    GroupStateSnapshot.write(s, out);
    return out.toBytes();
  }

  /** Remembers the snapshot of the first replica at its prefix, for equal-prefix checks and older restores. */
  void takeSnapshot(int g) {
    Group gr = grp[g];
    Replica r = gr.lead();
    gr.snapshots.put(r.applied, snapshot(r.state));
    while (gr.snapshots.size() > 8) {
      gr.snapshots.pollFirstEntry();
    }
  }

  /**
   * Replaces replica {@code k} by a fresh one restored from a snapshot: its own state's (a
   * restart), the leader's (an installed snapshot), or an older one kept by {@link #takeSnapshot}
   * (a lagging replica). The restored state must write the same bytes; the gate is rebuilt from
   * the stored replies (rule 11: a restart hands every stored reply to the gate).
   */
  void restore(int g, int k, int how) {
    Group gr = grp[g];
    Replica old = gr.reps[k];
    byte[] snap;
    int at;
    if (how == 1 && gr.leader != k) {
      catchUp(gr.lead(), gr.log.size());
      snap = snapshot(gr.lead().state);
      at = gr.lead().applied;
    } else if (how == 2 && !gr.snapshots.isEmpty()) {
      var e = gr.snapshots.floorEntry(old.applied);
      if (e == null) {
        e = gr.snapshots.firstEntry();
      }
      snap = e.getValue();
      at = e.getKey();
    } else {
      snap = snapshot(old.state);
      at = old.applied;
    }
    Replica fresh = new Replica(g, k);
    Input in = new Input(snap);
    GroupStateSnapshot.read(fresh.state, in);
    assertEquals(snap.length, in.position(), "the snapshot reader must consume the whole snapshot");
    assertArrayEquals(snap, snapshot(fresh.state), () -> gid(g) + ": a restored state writes other bytes");
    fresh.applied = at;
    gr.reps[k] = fresh;
    restores++;
    if (gr.leader == k) {
      catchUp(fresh, gr.log.size());
      depose(g);
      newExchange(g);
    }
    fresh.state.forEachReply((id, r) -> offer(fresh, id, r));
  }

  // ---------------------------------------------------------------- leaders

  /** The deposed leader's exchange may keep running for a while (it does not know yet). */
  private void depose(int g) {
    Group gr = grp[g];
    if (gr.ex != null) {
      gr.ex.deposed = true;
      gr.deposed.add(gr.ex);
      gr.ex = null;
    }
  }

  /**
   * A new leader for group g: another replica (it may lag behind the log), with a new exchange
   * that starts with nothing collected. Submissions in flight at the old leader may be lost.
   */
  void changeLeader(int g, int to) {
    Group gr = grp[g];
    depose(g);
    gr.leader = to;
    leaderChanges++;
    if (rnd.nextBoolean()) {
      gr.decides.clear();
      gr.forwards.clear();
    }
    for (int h = 0; h < n; h++) {
      if (h != g) {
        sent[g][h] = 0;
      }
    }
    newExchange(g);
  }

  void changeLeader(int g) {
    changeLeader(g, (grp[g].leader + 1 + rnd.nextInt(REPLICAS - 1)) % REPLICAS);
  }

  /** The group loses its leader (an election starts): no entries, its exchange deposed. */
  void loseLeader(int g) {
    depose(g);
    leaderless[g] = true;
  }

  /** The group elects replica {@code k}. */
  void elect(int g, int k) {
    leaderless[g] = false;
    grp[g].leader = k;
    leaderChanges++;
    for (int h = 0; h < n; h++) {
      if (h != g) {
        sent[g][h] = 0;
      }
    }
    newExchange(g);
  }

  /** Ends the deposed exchanges of a group: they learned they lost leadership. */
  void silenceDeposed(int g) {
    for (Ex e : grp[g].deposed) {
      e.ex.leadership(false, now);
    }
    grp[g].deposed.clear();
  }

  private void flushExchange(int g) {
    Group gr = grp[g];
    if (gr.ex != null) {
      gr.ex.ex.flush(gr.ex.view(), now);
    }
  }

  /** The periodic step of every exchange of a group (the leader's, and deposed ones still running). */
  void tick(int g) {
    Group gr = grp[g];
    if (gr.ex != null) {
      gr.ex.ex.flush(gr.ex.view(), now);
      gr.ex.ex.tick(gr.ex.view(), now);
      if (knobs.inventMissing) {
        invent(g);
      }
    }
    for (Ex e : gr.deposed) {
      e.ex.tick(e.view(), now);
    }
  }

  /** Control: decide a message whose components are missing with made-up timestamps. */
  private void invent(int g) {
    GroupState s = lead(g);
    for (MsgId id : s.undecided().keySet()) {
      Component own = s.component(id);
      GroupId[] d = s.undecidedDests(id);
      if (own == null || d == null || rnd.nextInt(4) != 0) {
        continue;
      }
      long[] ts = new long[d.length];
      for (int j = 0; j < d.length; j++) {
        ts[j] = d[j].equals(s.self()) ? own.lts() : own.lts();
      }
      grp[g].decides.add(new Decision(id, d, ts, own.digest(), false));
    }
  }

  // ---------------------------------------------------------------- submissions

  /**
   * Submits the group's next start batch: its buffered client starts and its leader's decisions
   * and forwards (decisions first when applied). With faults the batch may be lost (no leader
   * change: the starts go back to the buffer, the decisions are gone) or appended twice.
   */
  void submit(int g, boolean faults) {
    Group gr = grp[g];
    if (leaderless[g]) {
      return;
    }
    if (knobs.predictOwn) {
      for (var e : predicted.get(g).entrySet()) {
        predictFor(g, e.getKey(), e.getValue());
      }
      predicted.get(g).clear();
    }
    if (gr.starts.isEmpty() && gr.decides.isEmpty() && gr.forwards.isEmpty()) {
      return;
    }
    Start[] st = gr.starts.toArray(new Start[0]);
    StartBatch b = new StartBatch(st.length == 0 ? -1 : now / MS, st, gr.decides.toArray(new Decision[0]),
        gr.forwards.toArray(new Forward[0]));
    boolean lose = loseBatch.test(g) || (faults && rnd.nextInt(100) < knobs.batchLossPct);
    gr.decides.clear();
    gr.forwards.clear();
    gr.starts.clear();
    if (knobs.predictOwn) {
      GroupState s = lead(g);
      for (Start x : st) {
        if (x.dests().length > 1 && !s.order.isPending(x.id())) {
          predicted.get(g).put(x.id(), s.order.clock + 1);
        }
      }
    }
    if (lose) {
      batchesLost++;
      gr.starts.addAll(Arrays.asList(st)); // the node resubmits the starts while a client waits
      return;
    }
    append(g, b);
    if (faults && rnd.nextInt(100) < knobs.batchDupPct) {
      batchesDoubled++;
      append(g, b);
    }
  }

  /** Control predictOwn: a decision of a message the leader just made pending, with clock+1 as its own lts. */
  private void predictFor(int g, MsgId id, long own) {
    GroupState s = lead(g);
    GroupId[] d = s.undecidedDests(id);
    if (d == null) {
      return;
    }
    long[] ts = new long[d.length];
    for (int j = 0; j < d.length; j++) {
      if (d[j].equals(s.self())) {
        ts[j] = own;
      } else {
        Component c = lead(idx(d[j])).component(id);
        if (c == null) {
          return;
        }
        ts[j] = c.lts();
      }
    }
    grp[g].decides.add(new Decision(id, d, ts, s.component(id).digest(), false));
  }

  // ---------------------------------------------------------------- channels

  /**
   * Ships one batch from g to h, from g's leader's applied state, appended to h's log. With
   * faults, the batch may resend old items, skip ahead (a gap), or be lost; the sender goes back
   * to the receiver's next expected number (go-back-N). Lazy items ship like any other.
   */
  boolean ship(int g, int h, boolean faults) {
    if (leaderless[g] || leaderless[h] || channelBlocked.test(g, h)) {
      return false;
    }
    GroupState s = lead(g);
    long[] pos = s.channelPositions(gid(h));
    long first = pos[0];
    long next = pos[1];
    long ack = pos[2];
    long cur = Math.max(sent[g][h], first);
    long start = cur;
    if (faults) {
      int f = rnd.nextInt(10);
      if (f < 2 && cur > first) {
        start = first + rnd.nextInt((int) (cur - first));
        gapsAndDups++;
      } else if (f < 3 && cur + 1 < next) {
        start = cur + 1;
        gapsAndDups++;
      }
      if (rnd.nextInt(8) == 0) {
        ack = ack == 0 ? 0 : rnd.nextInt((int) Math.min(ack + 1, Integer.MAX_VALUE));
      }
    }
    List<Object> items = start < next ? s.outboxRange(gid(h), start, 1 + rnd.nextInt(8)) : List.of();
    boolean owesAck = lead(h).channelPositions(gid(g))[0] < ack;
    if (items.isEmpty() && !owesAck) {
      return false;
    }
    long firstSeq = items.isEmpty() ? next : start;
    ChannelBatch b = new ChannelBatch(gid(g), firstSeq, items.toArray(), ack);
    if (faults && rnd.nextInt(15) == 0) {
      gapsAndDups++;
      sent[g][h] = first; // lost: the sender goes back
      return true;
    }
    append(h, b);
    sent[g][h] = lead(h).channelPositions(gid(g))[2];
    return true;
  }

  // ---------------------------------------------------------------- the unlogged network

  void net(Packet m) {
    boolean faults = knobs.netLossPct > 0;
    if (faults && rnd.nextInt(100) < knobs.netLossPct) {
      return;
    }
    m.at = now + (knobs.netMaxDelay > 0 ? (long) (rnd.nextDouble() * knobs.netMaxDelay) : 0);
    m.seq = netSeq++;
    network.add(m);
    if (faults && rnd.nextInt(100) < knobs.netDupPct) {
      Packet d = new Packet(m.kind, m.from, m.fromRep, m.to, m.comps, m.ex, m.ids);
      d.target = m.target;
      d.at = now + (long) (rnd.nextDouble() * Math.max(1, knobs.netMaxDelay));
      d.seq = netSeq++;
      network.add(d);
    }
  }

  /** Delivers every unlogged message due by {@code now}. */
  void deliverNetwork() {
    while (!network.isEmpty() && network.peek().at <= now) {
      deliver(network.poll());
    }
  }

  /** The replica of group h that a message reaches: its leader, or (sometimes, or as asked) a follower. */
  private Replica target(int h, int asked) {
    Group gr = grp[h];
    if (asked >= 0) {
      return gr.reps[asked];
    }
    if (rnd.nextInt(100) < knobs.followerPct) {
      return gr.reps[rnd.nextInt(REPLICAS)];
    }
    return gr.lead();
  }

  private void deliver(Packet m) {
    if (unreachable.test(m.to)) {
      return;
    }
    switch (m.kind) {
      case PUSH -> {
        Group to = grp[m.to];
        Replica t = target(m.to, -1);
        if (to.ex != null && to.ex.rep == t) {
          to.ex.ex.received(to.ex.view(), m.comps, now);
        }
        List<Component> ans = Exchange.answer(Exchange.viewOf(t.state), m.comps);
        if (!ans.isEmpty()) {
          net(new Packet(Kind.ANSWER, m.to, t, m.from, ans, m.ex, null));
        }
      }
      case ANSWER -> m.ex.ex.received(m.ex.view(), m.comps, now);
      case QUERY -> {
        Replica t = target(m.to, m.target);
        List<MsgId> yes = new ArrayList<>();
        for (MsgId id : m.ids) {
          if (t.state.started(id)) {
            yes.add(id);
            evidence.putIfAbsent(gid(m.to) + " " + id, "replica " + t.k + " at log prefix " + t.applied + " of "
                + grp[m.to].log.size() + ": " + t.state.describe(id));
          }
        }
        if (!yes.isEmpty()) {
          // from the answering group, to the asking replica
          net(new Packet(Kind.QANSWER, m.to, m.fromRep, m.from, null, null, yes.toArray(new MsgId[0])));
        }
      }
      case QANSWER -> {
        Replica asker = m.fromRep;
        if (asker != null && grp[asker.g].reps[asker.k] == asker) {
          for (MsgId id : m.ids) {
            Held h = asker.gate.get(id);
            if (h != null) {
              h.started.add(gid(m.from));
            }
          }
          release(asker);
        }
      }
      default -> throw new IllegalStateException();
    }
  }

  // ---------------------------------------------------------------- the reply gate (rule 11)

  /** A client waits at replica (g, node) for message id. */
  void waitAt(int g, int node, MsgId id) {
    waiters.computeIfAbsent(id, x -> new TreeSet<>()).add(g * REPLICAS + node);
  }

  boolean waits(Replica r, MsgId id) {
    TreeSet<Integer> w = waiters.get(id);
    return w != null && w.contains(r.g * REPLICAS + r.k);
  }

  /** A replica's state handed a reply on: the gate releases it, or holds it until every destination started. */
  void offer(Replica r, MsgId id, StoredReply reply) {
    if (!waits(r, id) || r.gate.containsKey(id)) {
      return;
    }
    GroupId[] dests = destsOf.apply(id);
    boolean gated = dests != null && dests.length > 1
        && (reply.status() == Status.OK || reply.status() == Status.ERROR) && !knobs.gateSkipsQueries;
    if (!gated) {
      releaseNow(r, id, reply);
      return;
    }
    Held h = new Held(id, dests, reply);
    h.started.add(gid(r.g));
    r.gate.put(id, h);
    ask(r, h);
  }

  /** The destinations of a message, as the client knows them. */
  java.util.function.Function<MsgId, GroupId[]> destsOf = id -> null;

  /** Sends StartedQuery for a held reply to the destinations that did not answer yet. */
  private void ask(Replica r, Held h) {
    if (h.lastAsk != Long.MIN_VALUE && now - h.lastAsk < Exchange.T_PULL_NANOS) {
      return;
    }
    h.lastAsk = now;
    int attempt = h.asks++;
    for (GroupId d : h.dests) {
      if (!h.started.contains(d)) {
        queriesSent++;
        int to = idx(d);
        Packet q = new Packet(Kind.QUERY, r.g, r, to, null, null, new MsgId[] {h.id});
        // the leader first, then round robin over the replicas (K8)
        q.target = attempt == 0 ? grp[to].leader : (grp[to].leader + attempt) % REPLICAS;
        if (queryTarget != null && queryTarget.applyAsInt(to, attempt) >= 0) {
          q.target = queryTarget.applyAsInt(to, attempt);
        }
        net(q);
      }
    }
  }

  private void release(Replica r) {
    for (var it = r.gate.values().iterator(); it.hasNext(); ) {
      Held h = it.next();
      if (h.started.size() == h.dests.length) {
        it.remove();
        releaseNow(r, h.id, h.reply);
      }
    }
  }

  private void releaseNow(Replica r, MsgId id, StoredReply reply) {
    logical++;
    sink.released(r.g, r.k, id, reply);
  }

  /** The periodic step of every gate: asks again. */
  void tickGates() {
    for (Group gr : grp) {
      for (Replica r : gr.reps) {
        for (Held h : r.gate.values()) {
          ask(r, h);
        }
      }
    }
  }

  // ---------------------------------------------------------------- checks and description

  /** Every replica of every group applies the whole log. */
  void catchUpAll() {
    for (Group gr : grp) {
      for (Replica r : gr.reps) {
        catchUp(r, gr.log.size());
      }
    }
  }

  /** Replicas at the same log prefix write the same bytes. */
  void assertReplicasEqual(int g, String when) {
    Group gr = grp[g];
    for (Replica a : gr.reps) {
      for (Replica b : gr.reps) {
        if (a.k < b.k && a.applied == b.applied) {
          assertArrayEquals(snapshot(a.state), snapshot(b.state), () -> gid(g) + ": replicas " + a.k + " and " + b.k
              + " differ at log prefix " + a.applied + " " + when);
        }
      }
    }
  }

  /** True when nothing is left anywhere: logs applied, nothing pending, retained, queued, unshipped or in flight. */
  String notQuiescent() {
    if (!network.isEmpty()) {
      return "unlogged messages in flight: " + network.size();
    }
    for (Group gr : grp) {
      if (!gr.starts.isEmpty() || !gr.decides.isEmpty() || !gr.forwards.isEmpty()) {
        return gid(gr.i) + " has unsubmitted starts/decisions/forwards";
      }
      for (Replica r : gr.reps) {
        GroupState s = r.state;
        if (r.applied != gr.log.size()) {
          return gid(gr.i) + " replica " + r.k + " lags";
        }
        if (s.pendingCount() != 0 || s.queuedCount() != 0 || s.retainedCount() != 0 || !s.exec.inboxes.isEmpty()) {
          return gid(gr.i) + " replica " + r.k + ": pending=" + s.pendingCount() + " queued=" + s.queuedCount()
              + " retained=" + s.retainedCount() + " inboxes=" + s.exec.inboxes.ids();
        }
        if (!r.gate.isEmpty()) {
          return gid(gr.i) + " replica " + r.k + " holds replies at its gate: " + r.gate.keySet();
        }
        for (int h = 0; h < n; h++) {
          if (h == gr.i) {
            continue;
          }
          long[] pos = s.channelPositions(gid(h));
          long[] back = lead(h).channelPositions(gid(gr.i));
          if (pos[0] != pos[1] || back[2] != pos[1]) {
            return "channel " + gid(gr.i) + "->" + gid(h) + " (replica " + r.k + ") not drained: "
                + Arrays.toString(pos) + ", receiver expects " + back[2];
          }
        }
      }
    }
    return null;
  }

  /** Describes what is still in flight (for failure messages). */
  String describe() {
    StringBuilder b = new StringBuilder();
    for (Group gr : grp) {
      GroupState s = gr.lead().state;
      b.append("\n  ").append(gid(gr.i)).append(" leader=").append(gr.leader).append(" log=").append(gr.log.size())
          .append(" applied=");
      for (Replica r : gr.reps) {
        b.append(r.applied).append(',');
      }
      b.append(" clock=").append(s.order.clock).append(" pending=").append(s.pendingCount()).append(" retained=")
          .append(s.retainedCount()).append(" queued=").append(s.queuedCount());
      if (!s.order.undecided.isEmpty()) {
        b.append("\n    first undecided: ").append(s.describe(s.order.undecided.first().start.id()));
      }
      if (s.retainedCount() > 0) {
        MsgId id = s.retention.entries.firstKey();
        Retention.Entry e = s.retention.entries.get(id);
        b.append("\n    first retained ").append(id).append(" delivered=").append(e.delivered).append(" acked=")
            .append(e.acked).append(" decision=").append(e.decision != null);
      }
    }
    return b.toString();
  }
}
