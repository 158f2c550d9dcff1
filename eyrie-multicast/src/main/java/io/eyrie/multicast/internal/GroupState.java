package io.eyrie.multicast.internal;

import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Deliverer;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.ClientTable.ClientRecord;
import io.eyrie.multicast.internal.Wire.ChannelBatch;
import io.eyrie.multicast.internal.Wire.Conflict;
import io.eyrie.multicast.internal.Wire.Data;
import io.eyrie.multicast.internal.Wire.Propose;
import io.eyrie.multicast.internal.Wire.Start;
import io.eyrie.multicast.internal.Wire.StartBatch;
import io.eyrie.multicast.internal.Wire.Started;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeSet;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The replicated, deterministic state of one group: fault-tolerant Skeen ordering, the group
 * channels (outboxes and positions), the execution queue with a parked head, replies and the
 * per-client records that make execution exactly-once.
 *
 * <p>This class applies entries: it validates and admits client starts, dispatches channel items
 * and wires its four parts, each of which owns its fields and its snapshot section:
 * {@link Ordering} (Skeen clock, pending messages, the delivery rule), {@link ExecutionQueue}
 * (delivered messages, the parked head, buffered items, replies awaiting started-signals),
 * {@link ClientTable} (exactly-once records, log time, expiry, tombstones) and {@link Outboxes}
 * (the channels' outboxes and positions). {@link GroupStateSnapshot} orders the sections.
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

    /**
     * The groups this group knows of, or which of them are open, changed (a group change was
     * delivered, or a snapshot was installed).
     */
    default void membershipChanged(SortedMap<GroupId, ClusterConfig.GroupInfo> known, Set<GroupId> open) {}

    /**
     * A delivered group change made a group known here; {@code knownThen} are the groups this
     * group knew right after it (the new one included). Every destination of the change delivers
     * it at the same point of the order of group changes, so this set is the same at each: the
     * groups an added group's replicas start knowing (see {@code Node}). Called while applying,
     * before {@link #membershipChanged}.
     */
    default void groupKnown(ClusterConfig.GroupInfo added, Set<GroupId> knownThen) {}
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
  final Membership members;
  final Deliverer app;
  final Codec codec;
  private Listener listener = NO_LISTENER;
  final Stats stats = new Stats();
  final Outboxes outboxes;
  final ClientTable clients;
  final Ordering order;
  final ExecutionQueue exec;

  /**
   * Creates the initial state of a group replica of a cluster of partitions only (every group
   * named is taken for a partition, so {@link io.eyrie.multicast.ExecutionContext#partitions()}
   * lists them all): for multicast tests. A cluster with an oracle needs the kinds: use the
   * constructor that takes {@code GroupInfo}s.
   *
   * @param self this group
   * @param known every group of the cluster
   * @param app the application
   * @param codec the cluster codec
   * @param clientExpiryMs how long (log time) an idle client's records are kept
   */
  public GroupState(GroupId self, Collection<GroupId> known, Deliverer app, Codec codec, long clientExpiryMs) {
    this(self, Membership.partitionsNamed(known), new TreeSet<>(known), app, codec, clientExpiryMs);
  }

  /**
   * Creates the initial state of a group replica.
   *
   * @param self this group
   * @param known every group this replica starts knowing of
   * @param open those of them that are open to clients
   * @param app the application
   * @param codec the cluster codec
   * @param clientExpiryMs how long (log time) an idle client's records are kept
   */
  public GroupState(GroupId self, Collection<ClusterConfig.GroupInfo> known, Set<GroupId> open, Deliverer app,
      Codec codec, long clientExpiryMs) {
    this.self = self;
    this.members = new Membership(known, open);
    this.app = app;
    this.codec = codec;
    this.changeTag = codec.encode(new Wire.GroupChange(self, "partition", new int[] {1}, false))[0];
    this.outboxes = new Outboxes(self, members.known().keySet(), stats);
    this.clients = new ClientTable(clientExpiryMs);
    this.order = new Ordering(self, outboxes);
    // The listener can change (setListener), so replies go through this state.
    this.exec = new ExecutionQueue(self, app, codec, stats, outboxes, clients, (id, r) -> listener.reply(id, r));
    exec.system = this::groupChange;
    exec.partitions = members::partitions;
    exec.openPartitions = members::openPartitions;
  }

  /** The first byte of an encoded {@link Wire.GroupChange} (its class's registration). */
  private final byte changeTag;

  /**
   * Executes a delivered group change instead of handing it to the application, or returns null
   * if the message is the application's. Eyrie's own types are registered below the
   * application's ids, so the first byte of the payload tells.
   *
   * <p>The change's destinations other than the group it adds are open groups ({@link
   * io.eyrie.multicast.ClusterAdmin#addGroup} sends it to the groups open in its view, and to the
   * new group once every group knows it), so they are marked open here too: a group added to the
   * running cluster starts knowing the groups added before it as known only, and the change that
   * opens it tells it, at one point of its log, which of them are open (review N3: otherwise it
   * would count an open group as halfway for ever).
   */
  private Execution groupChange(Start s) {
    byte[] payload = s.payload();
    if (payload == null || payload.length == 0 || payload[0] != changeTag) {
      return null;
    }
    Object o;
    try {
      o = codec.decode(payload);
    } catch (IllegalArgumentException e) {
      return Execution.error("malformed group change: " + e.getMessage());
    }
    if (!(o instanceof Wire.GroupChange c)) {
      return null;
    }
    boolean wasKnown = members.knows(c.group());
    String refused = members.apply(c);
    if (refused != null) {
      return Execution.error(refused);
    }
    if (!wasKnown && !c.group().equals(self)) {
      outboxes.addPeer(c.group());
    }
    for (GroupId d : s.dests()) {
      if (!d.equals(c.group())) {
        members.markOpen(d);
      }
    }
    if (!wasKnown) {
      listener.groupKnown(members.known().get(c.group()), Set.copyOf(members.known().keySet()));
    }
    LOG.info("{}: group change delivered: {} {} on nodes {}{}", self, c.kind(), c.group(),
        Arrays.toString(c.members()), c.open() ? ", open" : "");
    membershipDirty = true;
    return Execution.done();
  }

  private boolean membershipDirty;

  /** Returns the groups this group knows of, by id. */
  public SortedMap<GroupId, ClusterConfig.GroupInfo> knownGroups() {
    return members.known();
  }

  /** Returns the known groups that are open to clients. */
  public Set<GroupId> openGroups() {
    return members.open();
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
    long result = applyPart(entry);
    afterEntry();
    return result;
  }

  private long applyPart(Object entry) {
    long result = -1;
    if (entry instanceof StartBatch b) {
      stats.entries++;
      clients.advanceLogTime(b.time());
      if (b.starts() != null) {
        for (Start s : b.starts()) {
          applyStart(s);
        }
      }
      clients.sweep(this::activeClients);
    } else if (entry instanceof ChannelBatch b) {
      stats.entries++;
      result = outboxes.receive(b, this::applyItem);
    } else {
      LOG.warn("{}: ignoring unknown log entry {}", self, entry == null ? null : entry.getClass().getName());
    }
    return result;
  }

  private void afterEntry() {
    outboxes.flushChanged(listener);
    if (membershipDirty) {
      membershipDirty = false;
      listener.membershipChanged(members.known(), members.open());
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
      if (d == null || !members.knows(d)) {
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
    if (clients.mayHaveExecutedBeforeExpiry(id, order.isPending(id))) {
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
    ClientRecord rec = client(s);
    if (id.seq() < rec.watermark) {
      listener.reply(id, new Reply(STALE, null, "sequence number " + id.seq() + " is below the client's watermark "
          + rec.watermark + " (the command finished or was abandoned)"));
      return;
    }
    if (rec.delivered.contains(id)) {
      Reply r = rec.replies.get(id);
      if (r != null && !exec.isAwaitingStarts(id)) {
        listener.reply(id, r);
      }
      stats.duplicates++;
      return;
    }
    Msg m = order.get(id);
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

  /** Touches the client of a start and applies the watermark it carries. */
  private ClientRecord client(Start s) {
    long cid = s.id().client();
    ClientRecord rec = clients.touch(cid);
    if (clients.advanceWatermark(rec, s.watermark(), exec::isQueued, exec::isAwaitingStarts)) {
      exec.dropInboxesBelow(cid, s.watermark(), order::isPending);
    }
    return rec;
  }

  private Msg newPending(Start s) {
    Msg m = order.add(s);
    ClientRecord rec = clients.touch(s.id().client());
    rec.maxPending = Math.max(rec.maxPending, s.id().seq());
    return m;
  }

  /** The clients with a message in progress here, whose records must not expire. */
  private Set<Long> activeClients() {
    HashSet<Long> active = new HashSet<>();
    for (MsgId id : order.ids()) {
      active.add(id.client());
    }
    exec.addActiveClients(active);
    return active;
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
    ClientRecord rec = client(s);
    if (rec.delivered.contains(s.id())) {
      Msg q = exec.queued(s.id());
      if (q != null && q.start.sameContent(s)) {
        LOG.error("{}: duplicate proposal from {} for {} which was delivered already", self, from, s.id());
        return;
      }
      // Another version of a message delivered here (see above): let the proposer decide, and
      // do not execute ours if it has not started yet.
      LOG.error("{}: proposal from {} for {} which was delivered here; the id was reused with other content",
          self, from, s.id());
      if (q != null && !exec.isStarted(q)) {
        q.conflict = true;
      }
      outboxes.send(from, new Conflict(s.id(), order.clock));
      return;
    }
    Msg m = order.get(s.id());
    if (m == null) {
      m = newPending(s);
    } else if (!m.start.sameContent(s)) {
      LOG.error("{}: proposal from {} for {} with other content than the message pending here; it will not be "
          + "executed", self, from, s.id());
      m.conflict = true;
      if (Arrays.binarySearch(m.start.dests(), from) < 0) {
        outboxes.send(from, new Conflict(s.id(), Ordering.ownTs(m)));
        deliverReady();
        return;
      }
    }
    order.addProposal(m, from, p.ts());
    deliverReady();
  }

  private void applyConflict(GroupId from, Conflict c) {
    Msg m = c.id() == null ? null : order.get(c.id());
    if (m == null) {
      LOG.error("{}: dropping a conflict from {} for {}, which is not pending here", self, from, c.id());
      return;
    }
    LOG.error("{}: {} holds another message with the id {}; it will not be executed", self, from, c.id());
    m.conflict = true;
    if (Arrays.binarySearch(m.start.dests(), from) >= 0) {
      order.addProposal(m, from, c.ts());
    }
    deliverReady();
  }

  /**
   * Another destination ended a message without executing it (review N4; see {@link
   * Wire.Abandoned}). This group learns that another version exists: a version not started here
   * is not executed either; a started one gets the sender's item without value, which ends a
   * wait for the sender (the application sees it in abandonedBy).
   */
  private void applyAbandoned(GroupId from, Wire.Abandoned a) {
    if (a.id() == null) {
      return;
    }
    Msg m = order.get(a.id());
    if (m != null) {
      LOG.error("{}: {} ended {} without executing it (its id was reused); it will not be executed", self, from,
          a.id());
      m.conflict = true;
      return;
    }
    Msg q = exec.queued(a.id());
    if (q == null) {
      return; // finished here already
    }
    if (!exec.isStarted(q)) {
      LOG.error("{}: {} ended {} without executing it (its id was reused); it will not be executed", self, from,
          a.id());
      q.conflict = true;
    } else if (Arrays.binarySearch(q.start.dests(), from) >= 0) {
      LOG.error("{}: {} ended {} without executing it (its id was reused); it started here and is told so", self,
          from, a.id());
      exec.abandonedBy(from, a.id());
    }
  }

  /** Moves every deliverable message from the ordering to the execution queue, then runs it. */
  private void deliverReady() {
    for (Msg m = order.pollDeliverable(); m != null; m = order.pollDeliverable()) {
      clients.touch(m.start.id().client()).delivered.add(m.start.id());
      exec.enqueue(m);
      stats.delivered++;
      if (m.start.dests().length > 1) {
        stats.deliveredMulti++;
      }
    }
    exec.run();
  }

  private void applyItem(GroupId from, Object item) {
    if (item instanceof Propose p) {
      applyPropose(from, p);
    } else if (item instanceof Data d) {
      exec.receive(from, d.id(), d.value(), true, order.isPending(d.id()));
    } else if (item instanceof Started s) {
      exec.receive(from, s.id(), null, false, order.isPending(s.id()));
    } else if (item instanceof Conflict c) {
      applyConflict(from, c);
    } else if (item instanceof Wire.Abandoned a) {
      applyAbandoned(from, a);
    } else {
      LOG.error("{}: dropping unknown channel item {} from {}", self, item == null ? null : item.getClass(), from);
    }
  }

  // ---------------------------------------------------------------- reading (senders, snapshots, operators)

  /** Returns the channel positions towards a group: outbox first, outbox next, next expected in. */
  public long[] channelPositions(GroupId to) {
    return outboxes.positions(to);
  }

  /**
   * Returns up to {@code max} outbox items towards a group from sequence number {@code from}, and
   * about {@link Outboxes#MAX_BATCH_BYTES} at most (but at least one item if there is one).
   */
  public List<Object> outboxRange(GroupId to, long from, int max) {
    return outboxes.range(to, from, max);
  }

  /** Returns the groups this group has channels to. */
  public Set<GroupId> peers() {
    return outboxes.peers();
  }

  /** Returns the number of known, undelivered messages. */
  public int pendingCount() {
    return order.pending.size();
  }

  /** Returns the number of delivered messages whose execution has not finished. */
  public int queuedCount() {
    return exec.size();
  }

  /**
   * Gives {@code to} every stored reply that is released (no destination's started-signal is
   * still awaited), in no particular order.
   */
  void forEachReleasedReply(BiConsumer<MsgId, Reply> to) {
    clients.forEachReply((id, r) -> {
      if (!exec.isAwaitingStarts(id)) {
        to.accept(id, r);
      }
    });
  }

  /**
   * Describes this replica's progress for diagnosis: pending and queued messages (the oldest
   * ones), what the head waits for, and the channel positions. Not part of the state.
   */
  public String describe() {
    return GroupStateDescriber.describe(this);
  }

  /** Describes what this replica knows of one message, for diagnosis. */
  public String describe(MsgId id) {
    return GroupStateDescriber.describe(this, id);
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
}
