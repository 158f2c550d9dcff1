package io.eyrie.multicast.internal;

import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Deliverer;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.Wire.ChannelBatch;
import io.eyrie.multicast.internal.Wire.Conflict;
import io.eyrie.multicast.internal.Wire.Data;
import io.eyrie.multicast.internal.Wire.Propose;
import io.eyrie.multicast.internal.Wire.Start;
import io.eyrie.multicast.internal.Wire.StartBatch;
import io.eyrie.multicast.internal.Wire.Started;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The replicated, deterministic state of one group: fault-tolerant Skeen ordering, the group
 * channels (outboxes and positions), the execution queue with a parked head, replies and the
 * per-client records that make execution exactly-once.
 *
 * <p>Every replica applies the same entries in the same order and reaches the same state; the
 * only outputs are the calls on {@link Listener}, which are local (they complete waiting clients
 * and wake the channel senders) and never feed back into the state. Not thread-safe: the owner
 * serializes access.
 */
public final class GroupState {
  private static final Logger LOG = LoggerFactory.getLogger(GroupState.class);

  /** Reply statuses, shared with the client frames. */
  public static final int OK = 0;
  public static final int ERROR = 1;
  public static final int UNAVAILABLE = 2;
  public static final int BAD_REQUEST = 3;
  public static final int STALE = 4;
  public static final int EXPIRED = 5;

  /** Local effects of applying entries. */
  public interface Listener {
    /** A reply for a message is final and may be sent to a waiting client. */
    void reply(MsgId id, Reply reply);

    /** The outbox towards a group has new items. */
    void outboxChanged(GroupId to);
  }

  /** A reply as kept in the client table. */
  public record Reply(int status, byte[] body, String error) {}

  static final Listener NO_LISTENER = new Listener() {
    @Override
    public void reply(MsgId id, Reply reply) {}

    @Override
    public void outboxChanged(GroupId to) {}
  };

  final GroupId self;
  final TreeSet<GroupId> known;
  final Deliverer app;
  final Codec codec;
  final long clientExpiryMs;
  private Listener listener = NO_LISTENER;

  long clock;
  long logTime;
  long nextSweep;
  /** Known messages not yet delivered here. */
  final HashMap<MsgId, Msg> pending = new HashMap<>();
  final TreeSet<Msg> undecided = new TreeSet<>(Msg.BY_LOCAL_TS);
  final TreeSet<Msg> decided = new TreeSet<>(Msg.BY_FINAL_TS);
  /** Delivered messages not yet fully executed; the head may be parked. */
  final ArrayDeque<Msg> queue = new ArrayDeque<>();
  final HashMap<MsgId, Msg> queued = new HashMap<>();
  boolean headStarted;
  TreeSet<GroupId> parkedOn;
  /** Items received for messages that have not finished executing here. */
  final HashMap<MsgId, Inbox> inboxes = new HashMap<>();
  /** Replies recorded here but waiting for the other destinations' started-signals. */
  final HashMap<MsgId, TreeSet<GroupId>> awaitingStarts = new HashMap<>();
  final TreeMap<GroupId, Channel> channels = new TreeMap<>();
  final HashMap<Long, ClientRecord> clients = new HashMap<>();
  /**
   * Clients whose records expired: the log time of expiry and the highest seq this group ever
   * made pending for the client. A Start with a seq up to that one and not known here is refused
   * (a resend could otherwise execute again), even once a proposal recreated a record; a higher
   * seq cannot have been executed here (a client allocates seqs in increasing order) and is
   * accepted. Kept {@link #TOMBSTONE_FACTOR} expiry periods but at least
   * {@link #MIN_TOMBSTONE_MS}, and while a recreated record exists.
   */
  final HashMap<Long, Tombstone> tombstones = new HashMap<>();
  static final int TOMBSTONE_FACTOR = 10;
  /**
   * The least time a tombstone is kept, whatever the expiry: a resend or a delayed duplicate of a
   * Start can arrive as long as a client retries or a Start is in flight, which has nothing to do
   * with how long idle clients are kept. (Ten default expiry periods.)
   */
  static final long MIN_TOMBSTONE_MS = 5 * 60 * 60_000L;
  /**
   * How far one start batch may move the log time forward. The time of a batch is the wall clock
   * of whichever node submitted it, so without a bound one node whose clock stepped forward would
   * make every idle-looking client expire at once. With it, a forward step of the clock is spread
   * over many entries, while a group that receives a batch at least once a minute still follows
   * real time. (The log time never goes back, and before the first batch it is 0 and takes that
   * batch's time whole.) Since the log time then lags at most one step behind the time of the
   * next batch, activity learned through channels (which carry no time) and stamped with the
   * current log time is also at most one step stale; expiry periods are far longer.
   */
  static final long MAX_LOG_TIME_STEP_MS = 60_000L;
  /**
   * About how many bytes of items one channel batch carries at most (estimated; a single larger
   * item goes alone). Ratis refuses a log entry above its write byte limit, and a refused batch
   * would be resent identically for ever.
   */
  static final int MAX_BATCH_BYTES = 1 << 20;
  final Stats stats = new Stats();

  private final TreeSet<GroupId> dirty = new TreeSet<>();
  private boolean sentToReplyGroup;

  /**
   * Creates the initial state of a group replica.
   *
   * @param self this group
   * @param known every group of the cluster
   * @param app the application
   * @param codec the cluster codec
   * @param clientExpiryMs how long (log time) an idle client's records are kept
   */
  public GroupState(GroupId self, Collection<GroupId> known, Deliverer app, Codec codec, long clientExpiryMs) {
    this.self = self;
    this.known = new TreeSet<>(known);
    this.app = app;
    this.codec = codec;
    this.clientExpiryMs = clientExpiryMs;
    for (GroupId g : this.known) {
      if (!g.equals(self)) {
        channels.put(g, new Channel());
      }
    }
  }

  /** Sets the receiver of local effects. */
  public void setListener(Listener l) {
    this.listener = l == null ? NO_LISTENER : l;
  }

  /** Returns this group's id. */
  public GroupId self() {
    return self;
  }

  /** Returns the application. */
  public Deliverer app() {
    return app;
  }

  /** Returns counters of this replica (replicated values). */
  public Stats stats() {
    return stats;
  }

  // ---------------------------------------------------------------- entries

  /**
   * Applies one log entry. Never throws for bad content: a malformed entry is answered or
   * dropped, deterministically.
   *
   * @param entry the decoded entry
   * @return the result for the submitter: for a channel batch, this group's next expected
   *     sequence number from the sender; otherwise -1
   */
  public long apply(Object entry) {
    long result = -1;
    if (entry instanceof StartBatch b) {
      stats.entries++;
      if (b.time() > logTime) {
        logTime = logTime == 0 ? b.time() : Math.min(b.time(), saturatedAdd(logTime, MAX_LOG_TIME_STEP_MS));
      }
      if (b.starts() != null) {
        for (Start s : b.starts()) {
          applyStart(s);
        }
      }
      sweepClients();
    } else if (entry instanceof ChannelBatch b) {
      stats.entries++;
      result = applyChannelBatch(b);
    } else {
      LOG.warn("{}: ignoring unknown log entry {}", self, entry == null ? null : entry.getClass().getName());
    }
    flushDirty();
    return result;
  }

  private void flushDirty() {
    if (!dirty.isEmpty()) {
      for (GroupId g : dirty) {
        listener.outboxChanged(g);
      }
      dirty.clear();
    }
  }

  private String validate(Start s) {
    if (s == null || s.id() == null || s.dests() == null || s.replyGroup() == null || s.payload() == null) {
      return "incomplete message";
    }
    if (s.id().seq() < 0 || s.id().attempt() < 0) {
      return "negative sequence or attempt number";
    }
    if (s.dests().length == 0) {
      return "no destination";
    }
    for (int i = 0; i < s.dests().length; i++) {
      GroupId d = s.dests()[i];
      if (d == null || !known.contains(d)) {
        return "unknown group " + d;
      }
      if (i > 0 && s.dests()[i - 1].compareTo(d) >= 0) {
        return "destinations must be ascending without repeats";
      }
    }
    if (Arrays.binarySearch(s.dests(), self) < 0) {
      return "group " + self + " is not a destination";
    }
    if (Arrays.binarySearch(s.dests(), s.replyGroup()) < 0) {
      return "reply group " + s.replyGroup() + " is not a destination";
    }
    return null;
  }

  private void applyStart(Start s) {
    String invalid = validate(s);
    if (invalid != null) {
      if (s != null && s.id() != null) {
        listener.reply(s.id(), new Reply(BAD_REQUEST, null, invalid));
      }
      return;
    }
    MsgId id = s.id();
    Tombstone tomb = tombstones.get(id.client());
    if (tomb != null && id.seq() <= maxPendingSeq(id.client(), tomb) && !knownHere(id)) {
      // The client's record expired here, so this group forgot which of its messages it has
      // executed: a message it does not know now, with a seq it once made pending, may be one it
      // executed before the expiry. That holds even if a proposal recreated the record since (the
      // new record only knows the messages learned after it), so the tombstone is checked, not
      // the record. A higher seq was never pending here, so it was never executed here (nor
      // anywhere, since delivery needs this group's proposal) and is accepted. The client must
      // treat EXPIRED as an unknown outcome: another destination may have proposed the message
      // here before this Start, or may yet.
      listener.reply(id, new Reply(EXPIRED, null, "client " + Long.toHexString(id.client())
          + " was idle longer than the expiry time and this group cannot tell whether it executed message " + id
          + "; the outcome is unknown"));
      return;
    }
    ClientRecord rec = client(id.client());
    advanceWatermark(id.client(), rec, s.watermark());
    if (id.seq() < rec.watermark) {
      listener.reply(id, new Reply(STALE, null, "sequence number " + id.seq() + " is below the client's watermark "
          + rec.watermark + " (the command finished or was abandoned)"));
      return;
    }
    if (rec.delivered.contains(id)) {
      Reply r = rec.replies.get(id);
      if (r != null && !awaitingStarts.containsKey(id)) {
        listener.reply(id, r);
      }
      stats.duplicates++;
      return;
    }
    Msg m = pending.get(id);
    if (m != null) {
      if (!m.start.sameContent(s)) {
        listener.reply(id, new Reply(BAD_REQUEST, null, "message id " + id + " reused with other content"));
      }
      stats.duplicates++;
      return;
    }
    newPending(s);
    deliverReady();
  }

  private void newPending(Start s) {
    Msg m = new Msg(s);
    pending.put(s.id(), m);
    ClientRecord rec = client(s.id().client());
    rec.maxPending = Math.max(rec.maxPending, s.id().seq());
    clock++;
    if (s.dests().length == 1) {
      m.finalTs = clock;
      decided.add(m);
    } else {
      m.localTs = clock;
      m.proposals.put(self, clock);
      undecided.add(m);
      for (GroupId d : s.dests()) {
        if (!d.equals(self)) {
          send(d, new Propose(s, clock));
        }
      }
    }
  }

  /** The highest seq made pending here for a client that has a tombstone, counting its recreated record. */
  private long maxPendingSeq(long clientId, Tombstone tomb) {
    ClientRecord rec = clients.get(clientId);
    return rec == null ? tomb.maxSeq : Math.max(tomb.maxSeq, rec.maxPending);
  }

  /** True if the message is pending here, or delivered here and still in its client's record. */
  private boolean knownHere(MsgId id) {
    if (pending.containsKey(id)) {
      return true;
    }
    ClientRecord rec = clients.get(id.client());
    return rec != null && rec.delivered.contains(id);
  }

  /*
   * A message id reused with other content (review F7: a reused client id, or colliding
   * incarnation ids) must not make groups deliver different messages under one id, nor block any
   * group. A group that sees a proposal whose content differs from its own pending version marks
   * the message conflicting: it still takes part in the ordering (so no group waits for ever)
   * but never executes it; at its head the message ends with an error reply (at the reply group)
   * and only the started-signal is sent. Each destination proposes its own version, so a group
   * whose version shares a destination with another version receives that other version (or a
   * Conflict) and marks it too. If the proposer is among this group's destinations, its timestamp
   * counts as usual; otherwise the proposer waits for a proposal this group would never send, so
   * it is answered with a Conflict carrying this group's timestamp, which the proposer counts as
   * this group's proposal and which marks the message there. A proposal for a message delivered
   * here also comes from a group outside this group's version's destinations (channels are
   * exactly-once and a group proposes once, so the proposals of this version's destinations were
   * all counted before delivery): it is answered with a Conflict as well. The order of a
   * conflicting message may differ between groups (their versions have different destination
   * sets), which is harmless since it runs nowhere it was marked. A group where no other version
   * ever shows up executes its version; the guarantee is that no group blocks and no group that
   * learned of another version executes either.
   */

  /*
   * A proposal is never refused, not even for an expired client: the proposer has the message
   * pending and cannot decide it without this group's proposal, so refusing it would block the
   * proposer (and every later message there) forever. Accepting it is safe because a group makes
   * a message pending at most once (a Start of a message it may have executed is refused STALE or
   * EXPIRED), so each destination proposes a message once, and this group delivers it only after
   * every other destination's proposal arrived: a proposal always concerns a message that was
   * never delivered here.
   */
  private void applyPropose(GroupId from, Propose p) {
    Start s = p.start();
    String invalid = validate(s);
    if (invalid != null || Arrays.binarySearch(s.dests(), from) < 0) {
      LOG.error("{}: dropping invalid proposal from {}: {}", self, from, invalid);
      return;
    }
    ClientRecord rec = client(s.id().client());
    advanceWatermark(s.id().client(), rec, s.watermark());
    if (rec.delivered.contains(s.id())) {
      Msg q = queued.get(s.id());
      if (q != null && q.start.sameContent(s)) {
        LOG.error("{}: duplicate proposal from {} for {} which was delivered already", self, from, s.id());
        return;
      }
      // Another version of a message delivered here (see above): let the proposer decide, and
      // do not execute ours if it has not started yet.
      LOG.error("{}: proposal from {} for {} which was delivered here; the id was reused with other content",
          self, from, s.id());
      if (q != null && !(q == queue.peek() && headStarted)) {
        q.conflict = true;
      }
      send(from, new Conflict(s.id(), clock));
      return;
    }
    Msg m = pending.get(s.id());
    if (m == null) {
      newPending(s);
      m = pending.get(s.id());
    } else if (!m.start.sameContent(s)) {
      LOG.error("{}: proposal from {} for {} with other content than the message pending here; it will not be "
          + "executed", self, from, s.id());
      m.conflict = true;
      if (Arrays.binarySearch(m.start.dests(), from) < 0) {
        send(from, new Conflict(s.id(), m.localTs >= 0 ? m.localTs : m.finalTs));
        deliverReady();
        return;
      }
    }
    addProposal(m, from, p.ts());
    deliverReady();
  }

  private void applyConflict(GroupId from, Conflict c) {
    Msg m = c.id() == null ? null : pending.get(c.id());
    if (m == null) {
      LOG.error("{}: dropping a conflict from {} for {}, which is not pending here", self, from, c.id());
      return;
    }
    LOG.error("{}: {} holds another message with the id {}; it will not be executed", self, from, c.id());
    m.conflict = true;
    if (Arrays.binarySearch(m.start.dests(), from) >= 0) {
      addProposal(m, from, c.ts());
    }
    deliverReady();
  }

  private void addProposal(Msg m, GroupId from, long ts) {
    if (m.finalTs >= 0) {
      return;
    }
    m.proposals.put(from, ts);
    if (m.proposals.size() == m.start.dests().length) {
      undecided.remove(m);
      long max = 0;
      for (long t : m.proposals.values()) {
        max = Math.max(max, t);
      }
      m.finalTs = max;
      clock = Math.max(clock, max);
      decided.add(m);
    }
  }

  private void deliverReady() {
    while (!decided.isEmpty()) {
      Msg m = decided.first();
      if (!undecided.isEmpty() && undecided.first().localTs <= m.finalTs) {
        break;
      }
      decided.pollFirst();
      pending.remove(m.start.id());
      client(m.start.id().client()).delivered.add(m.start.id());
      queue.add(m);
      queued.put(m.start.id(), m);
      stats.delivered++;
      if (m.start.dests().length > 1) {
        stats.deliveredMulti++;
      }
    }
    runQueue();
  }

  // ---------------------------------------------------------------- execution

  private void runQueue() {
    while (!queue.isEmpty()) {
      Msg m = queue.peek();
      Execution ex;
      Ctx ctx = new Ctx(m);
      if (!headStarted) {
        headStarted = true;
        sentToReplyGroup = false;
        ex = m.conflict ? Execution.error("message id " + m.start.id()
            + " was reused with other content; it was not executed") : invoke(ctx, true);
        if (!self.equals(m.start.replyGroup()) && !sentToReplyGroup) {
          send(m.start.replyGroup(), new Started(m.start.id()));
        }
      } else if (parkedOn != null && satisfied(m.start.id(), parkedOn)) {
        ex = invoke(ctx, false);
      } else {
        return;
      }
      if (ex.isAwait()) {
        TreeSet<GroupId> on = new TreeSet<>(ex.awaited());
        on.remove(self);
        GroupId outside = null;
        for (GroupId g : on) {
          if (Arrays.binarySearch(m.start.dests(), g) < 0) {
            outside = g;
            break;
          }
        }
        if (on.isEmpty()) {
          ex = Execution.error("a message cannot wait for its own group");
        } else if (outside != null) {
          // Only destinations send items for a message: the wait could never end.
          ex = Execution.error("a message cannot wait for group " + outside + ", which is not a destination");
        } else {
          parkedOn = on;
          stats.parks++;
          continue;
        }
      }
      finish(m, ex);
    }
  }

  /**
   * Runs the application on a message. Whatever it throws becomes an error reply, Errors
   * included (an AssertionError or a LinkageError is as deterministic as the application): an
   * exception escaping apply would stop the Ratis server on every replica. A
   * {@link VirtualMachineError} (out of memory, stack overflow) is rethrown instead: it depends on
   * the replica, not on the log, so answering it could make replicas diverge. Decoding cannot
   * overflow the stack ({@link Codec#MAX_DEPTH}); deliverers must not recurse without bound.
   */
  private Execution invoke(Ctx ctx, boolean first) {
    try {
      Execution ex = first ? app.deliver(ctx) : app.resume(ctx);
      return ex == null ? Execution.done() : ex;
    } catch (VirtualMachineError e) {
      throw e;
    } catch (Throwable e) {
      LOG.warn("{}: application failed on {}: {}", self, ctx.m.start.id(), e.toString());
      return Execution.error("application error: " + e);
    }
  }

  private boolean satisfied(MsgId id, Set<GroupId> from) {
    Inbox in = inboxes.get(id);
    if (in == null) {
      return false;
    }
    for (GroupId g : from) {
      List<byte[]> items = in.data.get(g);
      if (items == null || items.isEmpty()) {
        return false;
      }
    }
    return true;
  }

  private void finish(Msg m, Execution ex) {
    queue.poll();
    MsgId id = m.start.id();
    queued.remove(id);
    headStarted = false;
    parkedOn = null;
    stats.executed++;
    Inbox in = inboxes.remove(id);
    if (!self.equals(m.start.replyGroup())) {
      return;
    }
    Reply r;
    if (ex.isError()) {
      r = new Reply(ERROR, null, ex.errorMessage());
    } else {
      byte[] body;
      try {
        body = codec.encode(ex.replyValue());
      } catch (VirtualMachineError e) {
        throw e;
      } catch (Throwable e) {
        // Unregistered, nested too deep, or an application serializer failed (see invoke).
        body = null;
      }
      r = body == null ? new Reply(ERROR, null, "reply is not encodable: " + ex.replyValue().getClass().getName())
          : new Reply(OK, body, null);
    }
    ClientRecord rec = client(id.client());
    rec.replies.put(id, r);
    TreeSet<GroupId> waiting = new TreeSet<>();
    // A conflicting message ran nowhere it was marked, and other versions may have other
    // destinations: no started-signal to wait for.
    for (GroupId d : m.conflict ? new GroupId[0] : m.start.dests()) {
      if (!d.equals(self) && (in == null || !in.heard.contains(d))) {
        waiting.add(d);
      }
    }
    if (waiting.isEmpty()) {
      listener.reply(id, r);
    } else {
      awaitingStarts.put(id, waiting);
    }
  }

  private void send(GroupId to, Object item) {
    Channel c = channels.get(to);
    if (c == null) {
      throw new IllegalArgumentException("no channel from " + self + " to " + to);
    }
    c.outbox.append(item);
    stats.itemsSent++;
    dirty.add(to);
  }

  // ---------------------------------------------------------------- channels

  private long applyChannelBatch(ChannelBatch b) {
    Channel c = b.from() == null ? null : channels.get(b.from());
    if (c == null || b.items() == null) {
      LOG.error("{}: dropping channel batch from unknown group {}", self, b.from());
      return -1;
    }
    if (b.ackForYou() > c.outbox.first() && b.ackForYou() <= c.outbox.next()) {
      c.outbox.trimBelow(b.ackForYou());
    }
    for (int i = 0; i < b.items().length; i++) {
      long seq = b.firstSeq() + i;
      if (seq == c.nextIn) {
        c.nextIn++;
        stats.itemsReceived++;
        applyItem(b.from(), b.items()[i]);
      }
    }
    return c.nextIn;
  }

  private void applyItem(GroupId from, Object item) {
    if (item instanceof Propose p) {
      applyPropose(from, p);
    } else if (item instanceof Data d) {
      receive(from, d.id(), d.value(), true);
    } else if (item instanceof Started s) {
      receive(from, s.id(), null, false);
    } else if (item instanceof Conflict c) {
      applyConflict(from, c);
    } else {
      LOG.error("{}: dropping unknown channel item {} from {}", self, item == null ? null : item.getClass(), from);
    }
  }

  private void receive(GroupId from, MsgId id, byte[] value, boolean isData) {
    TreeSet<GroupId> waiting = awaitingStarts.get(id);
    if (waiting != null) {
      waiting.remove(from);
      if (waiting.isEmpty()) {
        awaitingStarts.remove(id);
        ClientRecord rec = clients.get(id.client());
        Reply r = rec == null ? null : rec.replies.get(id);
        if (r != null) {
          listener.reply(id, r);
        }
      }
      return;
    }
    // Another destination sends items for a message only once it has delivered it, which needed
    // this group's proposal: the message is pending or queued here, or it finished here. An item
    // for a message that is neither is late and is dropped (even if the client's record, which
    // would tell that it finished, expired or was recreated since).
    if (!pending.containsKey(id) && !queued.containsKey(id)) {
      return;
    }
    Inbox in = inboxes.computeIfAbsent(id, k -> new Inbox());
    in.heard.add(from);
    if (isData) {
      in.data.computeIfAbsent(from, k -> new ArrayList<>()).add(value);
    }
    Msg head = queue.peek();
    if (head != null && head.start.id().equals(id) && parkedOn != null) {
      runQueue();
    }
  }

  // ---------------------------------------------------------------- clients

  /** Returns a client's record, creating it if needed; every use counts as activity. */
  private ClientRecord client(long id) {
    ClientRecord rec = clients.computeIfAbsent(id, k -> new ClientRecord());
    rec.lastSeen = Math.max(rec.lastSeen, logTime);
    return rec;
  }

  private void advanceWatermark(long clientId, ClientRecord rec, long watermark) {
    if (watermark <= rec.watermark) {
      return;
    }
    rec.watermark = watermark;
    rec.delivered.removeIf(id -> id.seq() < watermark && !queued.containsKey(id));
    rec.replies.keySet().removeIf(id -> id.seq() < watermark && !awaitingStarts.containsKey(id));
    inboxes.keySet().removeIf(id -> id.client() == clientId && id.seq() < watermark
        && !pending.containsKey(id) && !queued.containsKey(id));
  }

  /**
   * Drops the records of clients idle (in log time) for longer than the expiry and leaves a
   * tombstone for each. A record is kept while any message of its client is pending, queued,
   * awaiting started-signals or has buffered items here. A tombstone is kept for
   * {@link #TOMBSTONE_FACTOR} expiry periods, and as long as a record recreated by a proposal
   * exists (such a record does not know what was executed before the expiry).
   */
  private void sweepClients() {
    if (logTime < nextSweep) {
      return;
    }
    nextSweep = saturatedAdd(logTime, Math.max(1, clientExpiryMs / 10));
    HashSet<Long> active = new HashSet<>();
    for (MsgId id : pending.keySet()) {
      active.add(id.client());
    }
    for (MsgId id : queued.keySet()) {
      active.add(id.client());
    }
    for (MsgId id : awaitingStarts.keySet()) {
      active.add(id.client());
    }
    for (MsgId id : inboxes.keySet()) {
      active.add(id.client());
    }
    // Each decision depends only on its own entry, so the hash order does not matter.
    clients.entrySet().removeIf(e -> {
      // A record created before this group applied its first client start (from a proposal
      // over a channel, which carries no time) has lastSeen 0: it was seen just now, not in 1970.
      if (e.getValue().lastSeen == 0) {
        e.getValue().lastSeen = logTime;
      }
      if (logTime - e.getValue().lastSeen > clientExpiryMs && !active.contains(e.getKey())) {
        Tombstone old = tombstones.get(e.getKey());
        tombstones.put(e.getKey(), new Tombstone(logTime,
            old == null ? e.getValue().maxPending : Math.max(old.maxSeq, e.getValue().maxPending)));
        return true;
      }
      return false;
    });
    long keep = clientExpiryMs > Long.MAX_VALUE / TOMBSTONE_FACTOR ? Long.MAX_VALUE
        : Math.max(MIN_TOMBSTONE_MS, TOMBSTONE_FACTOR * clientExpiryMs);
    tombstones.entrySet().removeIf(e -> logTime - e.getValue().since > keep && !clients.containsKey(e.getKey()));
  }

  private static long saturatedAdd(long a, long b) {
    long r = a + b;
    return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
  }

  // ---------------------------------------------------------------- reading (for senders)

  /** Returns the channel positions towards a group: outbox first, outbox next, next expected in. */
  public long[] channelPositions(GroupId to) {
    Channel c = channels.get(to);
    return c == null ? null : new long[] {c.outbox.first(), c.outbox.next(), c.nextIn};
  }

  /**
   * Returns up to {@code max} outbox items towards a group from sequence number {@code from}, and
   * about {@link #MAX_BATCH_BYTES} at most (but at least one item if there is one).
   */
  public List<Object> outboxRange(GroupId to, long from, int max) {
    Channel c = channels.get(to);
    if (c == null) {
      return List.of();
    }
    List<Object> items = c.outbox.range(from, max);
    long bytes = 0;
    for (int i = 0; i < items.size(); i++) {
      bytes += estimatedBytes(items.get(i));
      if (bytes > MAX_BATCH_BYTES && i > 0) {
        return items.subList(0, i);
      }
    }
    return items;
  }

  /** An upper estimate of an outbox item's encoded size. */
  static long estimatedBytes(Object item) {
    if (item instanceof Data d) {
      return 64 + (d.value() == null ? 0 : d.value().length);
    }
    if (item instanceof Propose p && p.start() != null) {
      Start s = p.start();
      return 128 + (s.payload() == null ? 0 : s.payload().length)
          + (s.dests() == null ? 0 : 16L * s.dests().length) + (s.replyGroup() == null ? 0 : 16);
    }
    return 64;
  }

  /** Returns the groups this group has channels to. */
  public Set<GroupId> peers() {
    return Collections.unmodifiableSet(channels.keySet());
  }

  /** Returns the number of known, undelivered messages. */
  public int pendingCount() {
    return pending.size();
  }

  /** Returns the number of delivered messages whose execution has not finished. */
  public int queuedCount() {
    return queue.size();
  }

  /**
   * Describes this replica's progress for diagnosis: pending and queued messages (the oldest
   * ones), what the head waits for, and the channel positions. Not part of the state.
   */
  public String describe() {
    StringBuilder b = new StringBuilder();
    b.append(self).append(": clock=").append(clock).append(" pending=").append(pending.size())
        .append(" undecided=").append(undecided.size()).append(" decided=").append(decided.size())
        .append(" queue=").append(queue.size()).append(" awaitingStarts=").append(awaitingStarts.size())
        .append(" executed=").append(stats.executed).append('\n');
    int n = 0;
    for (Msg m : undecided) {
      if (n++ == 3) {
        break;
      }
      b.append("  undecided ").append(m.start.id()).append(" dests=").append(Arrays.toString(m.start.dests()))
          .append(" localTs=").append(m.localTs).append(" proposals=").append(m.proposals).append('\n');
    }
    if (!decided.isEmpty()) {
      Msg m = decided.first();
      b.append("  first decided ").append(m.start.id()).append(" finalTs=").append(m.finalTs).append('\n');
    }
    Msg head = queue.peek();
    if (head != null) {
      Inbox in = inboxes.get(head.start.id());
      b.append("  head ").append(head.start.id()).append(" dests=").append(Arrays.toString(head.start.dests()))
          .append(" started=").append(headStarted).append(" parkedOn=").append(parkedOn)
          .append(" heard=").append(in == null ? "[]" : in.heard).append(" data=")
          .append(in == null ? "{}" : in.data.keySet()).append('\n');
    }
    n = 0;
    for (var e : awaitingStarts.entrySet()) {
      if (n++ == 3) {
        break;
      }
      b.append("  awaiting starts ").append(e.getKey()).append(" from ").append(e.getValue()).append('\n');
    }
    for (var e : channels.entrySet()) {
      Channel c = e.getValue();
      b.append("  channel ").append(e.getKey()).append(": out first=").append(c.outbox.first()).append(" next=")
          .append(c.outbox.next()).append(" in next=").append(c.nextIn).append('\n');
    }
    return b.toString();
  }

  /** Describes what this replica knows of one message, for diagnosis. */
  public String describe(MsgId id) {
    ClientRecord rec = clients.get(id.client());
    Msg p = pending.get(id);
    return self + ": " + id + (p != null ? " pending(localTs=" + p.localTs + ", finalTs=" + p.finalTs + ", proposals="
        + p.proposals + ")" : "") + (queued.containsKey(id) ? " queued" : "")
        + (rec == null ? " no client record" : " record(watermark=" + rec.watermark + ", delivered="
        + rec.delivered.contains(id) + ", reply=" + rec.replies.get(id) + ")")
        + (awaitingStarts.containsKey(id) ? " awaiting starts from " + awaitingStarts.get(id) : "")
        + (tombstones.containsKey(id.client()) ? " TOMBSTONE" : "");
  }

  // ---------------------------------------------------------------- types

  /** Counters kept in the replicated state. */
  public static final class Stats {
    public long entries;
    public long delivered;
    public long deliveredMulti;
    public long executed;
    public long parks;
    public long duplicates;
    public long itemsSent;
    public long itemsReceived;
  }

  static final class Msg {
    static final java.util.Comparator<Msg> BY_LOCAL_TS = (a, b) -> {
      int c = Long.compare(a.localTs, b.localTs);
      return c != 0 ? c : a.start.id().compareTo(b.start.id());
    };
    static final java.util.Comparator<Msg> BY_FINAL_TS = (a, b) -> {
      int c = Long.compare(a.finalTs, b.finalTs);
      return c != 0 ? c : a.start.id().compareTo(b.start.id());
    };

    final Start start;
    long localTs = -1;
    long finalTs = -1;
    /** Another group holds another message under this id: never executed here (review F7). */
    boolean conflict;
    final TreeMap<GroupId, Long> proposals = new TreeMap<>();

    Msg(Start start) {
      this.start = start;
    }
  }

  static final class Inbox {
    final TreeSet<GroupId> heard = new TreeSet<>();
    /** The encoded items, per sender (decoded when the application reads them). */
    final TreeMap<GroupId, List<byte[]>> data = new TreeMap<>();
  }

  static final class Channel {
    SeqQueue outbox = new SeqQueue(0);
    long nextIn;
  }

  /** What is left of an expired client record: when it expired, and its highest pending seq. */
  record Tombstone(long since, long maxSeq) {}

  static final class ClientRecord {
    long watermark;
    long lastSeen;
    /** The highest seq made pending here since this record was created, or -1. */
    long maxPending = -1;
    final java.util.HashSet<MsgId> delivered = new java.util.HashSet<>();
    final HashMap<MsgId, Reply> replies = new HashMap<>();
  }

  final class Ctx implements ExecutionContext {
    final Msg m;
    private List<GroupId> dests;

    Ctx(Msg m) {
      this.m = m;
    }

    @Override
    public MsgId id() {
      return m.start.id();
    }

    @Override
    public List<GroupId> dests() {
      if (dests == null) {
        dests = List.of(m.start.dests());
      }
      return dests;
    }

    @Override
    public GroupId replyGroup() {
      return m.start.replyGroup();
    }

    @Override
    public GroupId group() {
      return self;
    }

    @Override
    public byte[] payloadBytes() {
      return m.start.payload();
    }

    @Override
    public Object payload() {
      return codec.decode(m.start.payload());
    }

    @Override
    public long logTime() {
      return logTime;
    }

    @Override
    public void send(GroupId to, Object item) {
      if (to == null || to.equals(self) || !channels.containsKey(to)) {
        throw new IllegalArgumentException("cannot send to " + to + " from " + self);
      }
      // Encoded now, on the apply thread: an item that cannot be encoded fails here, as an
      // IllegalArgumentException that makes the message's execution an error reply (the same on
      // every replica), instead of entering the outbox and wedging the channel (review F6).
      byte[] bytes = codec.encode(item);
      if (to.equals(m.start.replyGroup())) {
        sentToReplyGroup = true;
      }
      GroupState.this.send(to, new Data(m.start.id(), bytes));
    }

    @Override
    public List<Object> received(GroupId from) {
      Inbox in = inboxes.get(m.start.id());
      List<byte[]> items = in == null ? null : in.data.get(from);
      if (items == null) {
        return List.of();
      }
      // Decoded on every call: each caller gets its own objects, and the state keeps the bytes.
      List<Object> out = new ArrayList<>(items.size());
      for (byte[] b : items) {
        if (b == null) {
          throw new IllegalArgumentException("an item from " + from + " has no value");
        }
        out.add(codec.decode(b));
      }
      return Collections.unmodifiableList(out);
    }
  }
}
