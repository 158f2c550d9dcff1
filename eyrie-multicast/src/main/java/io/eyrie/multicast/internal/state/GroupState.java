package io.eyrie.multicast.internal.state;

import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Deliverer;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.Wire.ChannelBatch;
import io.eyrie.multicast.internal.Wire.Component;
import io.eyrie.multicast.internal.Wire.Decision;
import io.eyrie.multicast.internal.Wire.Forward;
import io.eyrie.multicast.internal.Wire.Start;
import io.eyrie.multicast.internal.Wire.StartBatch;
import java.util.Collection;
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
 * <p>This class applies entries and wires the parts. Four parts own the state, each its fields
 * and its snapshot section: {@link Ordering} (Skeen clock, pending messages, the delivery rule),
 * {@link ExecutionQueue} (delivered messages, the parked head, buffered items, replies awaiting
 * started-signals), {@link ClientTable} (exactly-once records, log time, expiry, tombstones) and
 * {@link Outboxes} (the channels' outboxes and positions); {@link Membership} holds the groups
 * known and open. Three parts hold the rules that join them: {@link Admission} (validation and
 * client starts), {@link ChannelItems} (proposals, items and reused ids from the channels) and
 * {@link GroupChanges} (group changes, executed in the queue). {@link GroupStateSnapshot} orders
 * the sections. What the parts share lives beside them, not here, so that they need not point
 * back at this class: {@link StoredReply}, {@link StateCounters} and {@link StateListener}.
 *
 * <p>Every replica applies the same entries in the same order and reaches the same state; the
 * only outputs are the calls on {@link StateListener}, which are local (they complete waiting
 * clients and wake the channel senders) and never feed back into the state. Not thread-safe: the
 * owner serializes access.
 */
public final class GroupState {
  private static final Logger LOG = LoggerFactory.getLogger(GroupState.class);

  final GroupId self;
  final Membership members;
  final Deliverer app;
  final Codec codec;
  private StateListener listener = StateListener.NONE;
  final StateCounters stats = new StateCounters();
  final Outboxes outboxes;
  final ClientTable clients;
  final Ordering order;
  final ExecutionQueue exec;
  final Admission admission;
  final ChannelItems items;
  final GroupChanges changes;
  final Retention retention;
  final Decisions decisions;

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
    this.outboxes = new Outboxes(self, members.known().keySet(), stats);
    this.clients = new ClientTable(clientExpiryMs);
    this.order = new Ordering(self);
    this.retention = new Retention(self);
    // The listener can change (setListener), so replies go through this state.
    this.exec = new ExecutionQueue(self, app, codec, stats, outboxes, clients, (id, r) -> listener.reply(id, r));
    this.admission = new Admission(this);
    this.items = new ChannelItems(this, admission);
    this.changes = new GroupChanges(this);
    this.decisions = new Decisions(this);
    exec.system = changes::execute;
    exec.partitions = members::partitions;
    exec.openPartitions = members::openPartitions;
  }

  /** Returns the groups this group knows of, by id. */
  public SortedMap<GroupId, ClusterConfig.GroupInfo> knownGroups() {
    return members.known();
  }

  /** Returns the known groups that are open to clients. */
  public Set<GroupId> openGroups() {
    return members.open();
  }

  /** The receiver of local effects of the moment. */
  StateListener listener() {
    return listener;
  }

  /** Sets the receiver of local effects. */
  public void setListener(StateListener l) {
    this.listener = l == null ? StateListener.NONE : l;
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
  public StateCounters stats() {
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
      // Decisions first, then forwards, then the starts: new starts get timestamps above the
      // decided ones and block nothing (design 4.3.1, rule 5). No time, no log time move (K12).
      for (Decision d : b.decides()) {
        decisions.apply(null, d);
      }
      for (Forward f : b.forwards()) {
        decisions.apply(f);
      }
      if (b.time() >= 0) {
        clients.advanceLogTime(b.time());
      }
      for (Start s : b.starts()) {
        admission.applyStart(s);
      }
      clients.sweep(admission::activeClients);
    } else if (entry instanceof ChannelBatch b) {
      stats.entries++;
      result = outboxes.receive(b, items::apply);
    } else {
      LOG.warn("{}: ignoring unknown log entry {}", self, entry == null ? null : entry.getClass().getName());
    }
    outboxes.flushChanged(listener);
    changes.afterEntry(listener);
    return result;
  }

  /** Moves every deliverable message from the ordering to the execution queue, then runs it. */
  void deliverReady() {
    for (Msg m = order.pollDeliverable(); m != null; m = order.pollDeliverable()) {
      clients.touch(m.start.id().client()).delivered.add(m.start.id());
      decisions.delivered(m.start.id());
      exec.enqueue(m);
      stats.delivered++;
      if (m.start.dests().length > 1) {
        stats.deliveredMulti++;
      }
    }
    exec.run();
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
   * Gives {@code to} every stored reply, in no particular order (a multi-group one still goes
   * through the per-replica started gate, design 4.3.1 rule 11).
   */
  public void forEachReply(BiConsumer<MsgId, StoredReply> to) {
    clients.forEachReply(to);
  }

  // ---------------------------------------------------------------- the unlogged exchange (design 4.3.1)

  /**
   * This group's component of a message it retains (its local timestamp, digest, and decision
   * once decided), or null: what a pull is answered with (rule 3).
   */
  public Component component(MsgId id) {
    return decisions.component(id);
  }

  /**
   * The components of other destinations this group's log holds for a message ({@code Conflict}
   * items of destinations with another version), by group; empty if none.
   */
  public java.util.Map<GroupId, Long> loggedComponents(MsgId id) {
    Retention.Entry e = retention.get(id);
    return e == null ? java.util.Map.of() : java.util.Collections.unmodifiableMap(e.logged);
  }

  /** The multi-destination messages undecided here, in id order, with their destinations. */
  public java.util.SortedMap<MsgId, GroupId[]> undecided() {
    java.util.TreeMap<MsgId, GroupId[]> out = new java.util.TreeMap<>();
    for (Msg m : order.undecided) {
      out.put(m.start.id(), m.start.dests());
    }
    return out;
  }

  /** The destinations of a multi-destination message undecided here, or null. */
  public GroupId[] undecidedDests(MsgId id) {
    Msg m = order.get(id);
    return m == null || m.finalTs >= 0 || m.start.dests().length < 2 ? null : m.start.dests();
  }

  /** The groups a {@code Forward} here already sent a message to (rule 9), or an empty set. */
  public Set<GroupId> forwardedTo(MsgId id) {
    Retention.Entry e = retention.get(id);
    return e == null ? Set.of() : java.util.Collections.unmodifiableSet(e.forwardedTo);
  }

  /** Whether this replica's applied state shows that the message started here (rule 11). */
  public boolean started(MsgId id) {
    return decisions.started(id);
  }

  /** The messages in the retention table (rule 8), in id order. */
  public Set<MsgId> retainedIds() {
    return java.util.Collections.unmodifiableSet(new TreeSet<>(retention.entries.keySet()));
  }

  /** The number of messages in the retention table (rule 8). */
  public int retainedCount() {
    return retention.size();
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
}
