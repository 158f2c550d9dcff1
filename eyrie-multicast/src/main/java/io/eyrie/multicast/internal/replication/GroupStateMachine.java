package io.eyrie.multicast.internal.replication;

import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Deliverer;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.Wire;
import io.eyrie.multicast.internal.state.GroupState;
import io.eyrie.multicast.internal.state.StateListener;
import io.eyrie.multicast.internal.transport.RatisSupport;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Ratis state machine of one group replica: decodes log entries, applies them to the
 * {@link GroupState} under its lock, answers queries, takes and loads snapshots of the whole state
 * (their files: {@link ReplicaSnapshots}), and holds the reply gate's waits for messages to start
 * here ({@link StartWaits}); the exchange reads the state through {@link #view()}.
 *
 * <p>Every apply future is completed when the entry is applied: nothing here waits for another
 * group (that would deadlock Ratis, which drains apply futures before a snapshot).
 */
public final class GroupStateMachine extends BaseStateMachine {
  private static final Logger LOG = LoggerFactory.getLogger(GroupStateMachine.class);

  /** Node-local reactions to this replica's events. */
  public interface Hooks {
    /** The local replica's leadership changed. */
    void leaderChanged(GroupId group, boolean isLeader, int leaderNode);

    /**
     * Another destination sent this replica components of messages (design 4.3.1, rule 4): the
     * node hands them to the group's exchange. Called after the query was answered, without the
     * state's lock.
     */
    default void components(GroupId group, java.util.List<Wire.Component> received) {}
  }

  private final GroupId group;
  private final Codec codec;
  private final Function<GroupId, GroupState> stateFactory;
  private final Hooks hooks;
  private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
  private final java.util.concurrent.locks.ReentrantLock lock = new java.util.concurrent.locks.ReentrantLock();
  private volatile GroupState state;
  private volatile StateListener listener = StateListener.NONE;
  private final AtomicLong snapshotsLoaded = new AtomicLong();
  private final AtomicLong snapshotsInstalled = new AtomicLong();
  private final AtomicLong snapshotsTaken = new AtomicLong();
  /** The reply gate's local waits (rule 11). Guarded by {@link #lock}. */
  private final StartWaits startWaits = new StartWaits();

  GroupStateMachine(GroupId group, Codec codec, Function<GroupId, GroupState> stateFactory, Hooks hooks) {
    this.group = group;
    this.codec = codec;
    this.stateFactory = stateFactory;
    this.hooks = hooks;
    this.state = stateFactory.apply(group);
  }

  /** Creates the state machine of a group replica with the application's deliverer. */
  public static GroupStateMachine create(GroupId group, ClusterConfig cluster, Codec codec, Deliverer.Factory apps,
      long clientExpiryMs, Hooks hooks) {
    return create(group, cluster, cluster.groupIds(), codec, apps, clientExpiryMs, hooks);
  }

  /**
   * Creates the state machine of a group replica that starts knowing the groups of {@code
   * cluster}, of which those in {@code open} are open (see {@code Membership}). {@code cluster}
   * is the replica's initial configuration, the same at every replica of the group (also the
   * initial state an empty snapshot restores), not what the node learned since (review N1).
   */
  public static GroupStateMachine create(GroupId group, ClusterConfig cluster, java.util.Set<GroupId> open,
      Codec codec, Deliverer.Factory apps, long clientExpiryMs, Hooks hooks) {
    java.util.Set<GroupId> initiallyOpen = java.util.Set.copyOf(open);
    return new GroupStateMachine(group, codec, g -> new GroupState(g, cluster.groups().values(), initiallyOpen,
        apps.create(g, cluster, codec), codec, clientExpiryMs), hooks);
  }

  /** Returns the group. */
  public GroupId group() {
    return group;
  }

  /** Sets the receiver of replies and outbox changes. */
  public void setListener(StateListener l) {
    this.listener = l;
    state.setListener(l);
  }

  /** Runs a function on the state under its lock (for senders, tests and metrics). */
  public <T> T read(Function<GroupState, T> f) {
    lock.lock();
    try {
      return f.apply(state);
    } finally {
      lock.unlock();
    }
  }

  /** A view of the applied state for the exchange; each read takes the state's lock (reentrant: once per {@code locked} step). */
  public Exchange.View view() {
    return StateView.locked(() -> state, lock);
  }

  /** Number of snapshots loaded into this replica (at start or by installation from a leader). */
  public long snapshotsLoaded() {
    return snapshotsLoaded.get();
  }

  /** Number of snapshots a leader installed on this replica (a lagging replica catching up). */
  public long snapshotsInstalled() {
    return snapshotsInstalled.get();
  }

  /** Number of snapshots this replica has written. */
  public long snapshotsTaken() {
    return snapshotsTaken.get();
  }

  @Override
  public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
    super.initialize(server, groupId, raftStorage);
    storage.init(raftStorage);
    getLifeCycle().startAndTransition(() -> load(storage.loadLatestSnapshot()));
  }

  /** Ratis pauses the machine before a leader's snapshot replaces its state. */
  @Override
  public void pause() {
    getLifeCycle().transition(org.apache.ratis.util.LifeCycle.State.PAUSING);
    getLifeCycle().transition(org.apache.ratis.util.LifeCycle.State.PAUSED);
  }

  /** Called by Ratis after a leader installed a snapshot on this replica. */
  @Override
  public void reinitialize() throws IOException {
    getLifeCycle().startAndTransition(() -> load(storage.loadLatestSnapshot()));
    snapshotsInstalled.incrementAndGet();
    // An operator wants to know: this replica was too far behind for the log and was caught up
    // by a whole copy of the state.
    LOG.info("{}: installed a snapshot from the leader, now at {}", group, getLastAppliedTermIndex());
  }

  @Override
  public SimpleStateMachineStorage getStateMachineStorage() {
    return storage;
  }

  private void load(SingleFileSnapshotInfo snapshot) throws IOException {
    if (snapshot == null) {
      return;
    }
    GroupState fresh = ReplicaSnapshots.read(group, snapshot, () -> stateFactory.apply(group));
    if (fresh == null) {
      return;
    }
    java.util.List<CompletableFuture<Boolean>> nowStarted;
    lock.lock();
    try {
      fresh.setListener(listener);
      state = fresh;
      setLastAppliedTermIndex(snapshot.getTermIndex());
      offerStoredReplies(fresh, listener);
      listener.membershipChanged(fresh.knownGroups(), fresh.openGroups());
      nowStarted = startWaits.takeStarted(fresh);
    } finally {
      lock.unlock();
    }
    nowStarted.forEach(f -> f.complete(true));
    snapshotsLoaded.incrementAndGet();
    LOG.info("{}: loaded snapshot {}", group, snapshot.getTermIndex());
  }

  /**
   * Gives the listener every reply the state stores and has released (none of its destinations
   * is still awaited). Called after a snapshot replaced the state: the entries the snapshot
   * covers were not applied here, so requests waiting on this node for their replies would
   * otherwise wait until they time out. Requests that wait for nothing ignore the offer.
   */
  static void offerStoredReplies(GroupState s, StateListener to) {
    s.forEachReply(to::reply);
  }


  @Override
  public long takeSnapshot() throws IOException {
    lock.lock();
    try {
      TermIndex last = getLastAppliedTermIndex();
      if (last == null || last.getIndex() < 0) {
        return -1;
      }
      int bytes = ReplicaSnapshots.write(storage, last, state);
      snapshotsTaken.incrementAndGet();
      LOG.info("{}: took snapshot {} ({} bytes)", group, last, bytes);
      return last.getIndex();
    } finally {
      lock.unlock();
    }
  }

  @Override
  public TransactionContext startTransaction(RaftClientRequest request) throws IOException {
    ByteString data = request.getMessage().getContent();
    Object entry;
    try {
      entry = codec.decode(data.toByteArray());
    } catch (IllegalArgumentException e) {
      throw new IOException(group + ": refusing a malformed entry: " + e.getMessage(), e);
    }
    if (!(entry instanceof Wire.StartBatch) && !(entry instanceof Wire.ChannelBatch)) {
      throw new IOException(group + ": refusing an entry of type " + (entry == null ? null : entry.getClass().getName()));
    }
    return TransactionContext.newBuilder()
        .setStateMachine(this)
        .setClientRequest(request)
        .setLogData(data)
        .setStateMachineContext(entry)
        .build();
  }

  @Override
  public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
    LogEntryProto e = trx.getLogEntry();
    Object entry = trx.getStateMachineContext();
    if (entry == null) {
      try {
        entry = codec.decode(e.getStateMachineLogEntry().getLogData().toByteArray());
      } catch (IllegalArgumentException ex) {
        LOG.error("{}: skipping undecodable log entry {}: {}", group, e.getIndex(), ex.getMessage());
        entry = null;
      }
    }
    long result;
    java.util.List<CompletableFuture<Boolean>> nowStarted;
    lock.lock();
    try {
      result = entry == null ? -1 : state.apply(entry);
      updateLastAppliedTermIndex(e.getTerm(), e.getIndex());
      nowStarted = startWaits.isEmpty() ? java.util.List.of() : startWaits.takeStarted(state);
    } finally {
      lock.unlock();
    }
    nowStarted.forEach(f -> f.complete(true));
    byte[] reply = ByteBuffer.allocate(8).putLong(result).array();
    return CompletableFuture.completedFuture(Message.valueOf(UnsafeByteOperations.unsafeWrap(reply)));
  }

  @Override
  public CompletableFuture<Message> query(Message request) {
    try {
      Object q = codec.decode(request.getContent().toByteArray());
      byte[] answer;
      lock.lock();
      try {
        Object a;
        if (q instanceof Wire.Components c) {
          // Any replica answers with its own components (rule 4); the leader also keeps the
          // sender's (below, after the lock).
          a = Exchange.answer(StateView.of(state), c.list() == null ? null : java.util.Arrays.asList(c.list()))
              .toArray(new Wire.Component[0]);
        } else if (q instanceof Wire.StartedQuery sq) {
          a = StartWaits.started(state, sq);
        } else if (q instanceof Wire.GroupQuery gq) {
          // Eyrie's own question; a group this one opened is known too.
          a = gq.group() == null ? 0 : state.openGroups().contains(gq.group()) ? 2
              : state.knownGroups().containsKey(gq.group()) ? 1 : 0;
        } else if (q instanceof Wire.HalfwayQuery) {
          a = state.knownGroups().keySet().stream().filter(g -> !state.openGroups().contains(g))
              .map(GroupId::name).toArray(String[]::new);
        } else {
          a = state.app().query(q);
        }
        // Encoded under the lock: an answer may share objects with the state, which the next
        // applied entry may change.
        answer = codec.encode(a);
      } finally {
        lock.unlock();
      }
      if (q instanceof Wire.Components c && c.list() != null) {
        hooks.components(group, java.util.Arrays.asList(c.list()));
      }
      return CompletableFuture.completedFuture(Message.valueOf(UnsafeByteOperations.unsafeWrap(answer)));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * Completes with true once this replica's applied state shows that the message started here
   * (rule 11), at once if it already does. A follower applies a moment after its leader, so the
   * reply gate waits here instead of asking the leader over the network. The caller bounds the
   * wait (it completes the future with false on its own deadline) and may ask the leader then.
   */
  public CompletableFuture<Boolean> whenStarted(MsgId id) {
    lock.lock();
    try {
      return startWaits.whenStarted(state, id);
    } finally {
      lock.unlock();
    }
  }

  /** Answers a query in process, as {@link #query} does for a Ratis client (a node's own replica). */
  public byte[] queryLocally(byte[] request) {
    try {
      return query(Message.valueOf(UnsafeByteOperations.unsafeWrap(request))).join().getContent().toByteArray();
    } catch (java.util.concurrent.CompletionException e) {
      throw e.getCause() instanceof RuntimeException r ? r : e;
    }
  }

  @Override
  public void notifyLeaderChanged(RaftGroupMemberId memberId, RaftPeerId newLeaderId) {
    LOG.info("{}: leader is now {} (seen by {})", group, newLeaderId == null ? "none" : newLeaderId,
        memberId.getPeerId());
    hooks.leaderChanged(group, memberId.getPeerId().equals(newLeaderId), RatisSupport.nodeId(newLeaderId));
  }

  @Override
  public void notifyLeaderReady() {
    hooks.leaderChanged(group, true, RatisSupport.nodeId(getId()));
  }
}
