package io.eyrie.multicast.testing;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Deliverer;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.internal.Wire.ChannelBatch;
import io.eyrie.multicast.internal.Wire.Start;
import io.eyrie.multicast.internal.Wire.StartBatch;
import io.eyrie.multicast.internal.Wire;
import io.eyrie.multicast.internal.state.GroupState;
import io.eyrie.multicast.internal.state.GroupStateSnapshot;
import io.eyrie.multicast.internal.state.StateListener;
import io.eyrie.multicast.internal.state.StoredReply;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.BiPredicate;
import java.util.function.Supplier;

/**
 * One replica of a group driven by hand, for deterministic simulations of a cluster in other
 * modules' tests (eyrie-it's {@code DssmrSim}): the real group state of eyrie-multicast, with the
 * application a {@link Deliverer.Factory} creates, behind the few operations a simulation needs.
 * The test applies the log entries a node would (a client's submission, a channel batch, the
 * leaders' decisions: {@link #decideAll}), moves items between the outboxes by hand, and
 * replaces a replica by one restored from its snapshot.
 * No threads, no time, no Ratis. The simulation of eyrie-multicast's own tests ({@code SimGroups})
 * uses the internals directly.
 */
public final class SimGroup {
  /** Large enough that no client's records ever expire. */
  private static final long NO_EXPIRY = 1L << 40;

  /** The replies the group emits, as a node would send them to the waiting clients. */
  public interface Replies {
    /**
     * The group answered a message.
     *
     * @param id the message
     * @param value the reply's body, decoded with the cluster codec
     */
    void answered(MsgId id, Object value);

    /**
     * The group refused or failed a message.
     *
     * @param id the message
     * @param why the reply's status and error text
     */
    void failed(MsgId id, String why);
  }

  /**
   * The positions of the channel towards a group.
   *
   * @param first the outbox's first sequence number (the items before it were acknowledged)
   * @param next the sequence number of the outbox's next item
   * @param expected the next sequence number this group expects from that group (its
   *     acknowledgement of the other direction)
   */
  public record Channel(long first, long next, long expected) {}

  private final GroupState state;
  /** Creates another replica of the group in its initial state, with the same replies. */
  private final Supplier<SimGroup> initial;

  private SimGroup(GroupState state, Supplier<SimGroup> initial) {
    this.state = state;
    this.initial = initial;
  }

  /**
   * Creates a replica of a group of a cluster in its initial state.
   *
   * @param self the group
   * @param cluster the cluster (every group in it is known and open)
   * @param factory creates the group's application
   * @param codec the cluster codec
   * @param replies receives the replies the group emits
   * @return the replica
   */
  public static SimGroup create(GroupId self, ClusterConfig cluster, Deliverer.Factory factory, Codec codec,
      Replies replies) {
    // The cluster's groups with their kinds (an oracle's deliverer must tell the oracle from a
    // partition), all open to clients.
    GroupState state = new GroupState(self, cluster.groups().values(), new TreeSet<>(cluster.groupIds()),
        factory.create(self, cluster, codec), codec, NO_EXPIRY);
    state.setListener(new StateListener() {
      @Override
      public void reply(MsgId id, StoredReply r) {
        if (r.status() == Status.OK) {
          replies.answered(id, codec.decode(r.body()));
        } else {
          replies.failed(id, r.status() + ": " + r.error());
        }
      }

      @Override
      public void outboxChanged(GroupId to) {}
    });
    return new SimGroup(state, () -> create(self, cluster, factory, codec, replies));
  }

  /** Returns the group's application, for its read-only queries. */
  public Deliverer app() {
    return state.app();
  }

  /**
   * Applies a log entry holding one client's submission of a message (as a node orders it when
   * the client's request reaches the group's leader).
   *
   * @param time the submitting node's wall-clock time (the log time)
   * @param id the message
   * @param dests the message's destinations
   * @param replyGroup the destination that answers the client
   * @param payload the encoded payload
   */
  public void submit(long time, MsgId id, GroupId[] dests, GroupId replyGroup, byte[] payload) {
    state.apply(new StartBatch(time, new Start[] {new Start(id, dests, replyGroup, payload, 0)}));
  }

  /** Returns the positions of this group's channel towards {@code to}. */
  public Channel channel(GroupId to) {
    long[] p = state.channelPositions(to);
    return new Channel(p[0], p[1], p[2]);
  }

  /** Returns up to {@code max} items of the outbox towards {@code to} from sequence number {@code from}. */
  public List<Object> outbox(GroupId to, long from, int max) {
    return state.outboxRange(to, from, max);
  }

  /**
   * Applies a log entry holding a channel batch from another group (as a node orders it when
   * that group's sender delivers the batch).
   *
   * @param from the sending group
   * @param firstSeq the sequence number of the first item
   * @param items the items, from the sender's outbox
   * @param ack the next sequence number the sender expects from this group
   */
  public void receive(GroupId from, long firstSeq, List<Object> items, long ack) {
    state.apply(new ChannelBatch(from, firstSeq, items.toArray(), ack));
  }

  /** Whether one group's component of a message reaches another group's leader. */
  @FunctionalInterface
  public interface Visibility {
    /** True if {@code from}'s component of message {@code id} reaches {@code to}. */
    boolean visible(GroupId from, GroupId to, MsgId id);
  }

  /**
   * Does what the groups' leaders do off the log (design 4.3.1) in one step, with every
   * component seen at once: see {@link #decideAt}, for every group. Returns true if anything
   * was logged.
   */
  public static boolean decideAll(Map<GroupId, SimGroup> groups, Visibility visible) {
    boolean moved = false;
    for (GroupId g : groups.keySet()) {
      moved |= decideAt(groups, g, visible);
    }
    return moved;
  }

  /**
   * Group {@code g}'s leader decides, off the log, what it can: for each message undecided at g
   * whose other destinations all hold their component of it, visible to g, g logs its decision;
   * a destination that does not know the message at all (its start never reached it) is sent the
   * message by a logged forward instead. Returns true if anything was logged.
   */
  public static boolean decideAt(Map<GroupId, SimGroup> groups, GroupId g, Visibility visible) {
    boolean moved = false;
    GroupState s = groups.get(g).state;
    for (Map.Entry<MsgId, GroupId[]> u : s.undecided().entrySet()) {
      MsgId id = u.getKey();
      GroupId[] dests = u.getValue();
      Wire.Component own = s.component(id);
      if (own == null) {
        continue;
      }
      long[] ts = new long[dests.length];
      boolean conflict = false;
      boolean complete = true;
      List<GroupId> unknowing = new ArrayList<>();
      for (int i = 0; i < dests.length; i++) {
        GroupId h = dests[i];
        if (h.equals(g)) {
          ts[i] = own.lts();
          continue;
        }
        SimGroup other = groups.get(h);
        Wire.Component c = other == null ? null : other.state.component(id);
        if (c == null) {
          complete = false;
          if (other != null && other.state.undecidedDests(id) == null && !s.forwardedTo(id).contains(h)
              && visible.visible(g, h, id)) {
            unknowing.add(h);
          }
        } else if (!visible.visible(h, g, id)) {
          complete = false;
        } else {
          ts[i] = c.lts();
          conflict |= c.digest() != own.digest();
        }
      }
      if (complete) {
        s.apply(new StartBatch(-1, null, new Wire.Decision[] {new Wire.Decision(id, dests, ts, own.digest(), conflict)},
            null));
        moved = true;
      } else if (!unknowing.isEmpty()) {
        s.apply(new StartBatch(-1, null, null, new Wire.Forward[] {new Wire.Forward(id, unknowing.toArray(new GroupId[0]))}));
        moved = true;
      }
    }
    return moved;
  }

  /** The messages this replica holds a component of (its retention table). */
  public java.util.Set<MsgId> componentIds() {
    return state.retainedIds();
  }

  /** Returns the number of delivered messages whose execution has not finished. */
  public int queuedCount() {
    return state.queuedCount();
  }

  /** Describes what this replica knows of a message, for diagnosis. */
  public String describe(MsgId id) {
    return state.describe(id);
  }

  /**
   * Returns a new replica of this group, with a fresh application, restored from this replica's
   * snapshot: what a new leader holds after it installed the snapshot. It emits its replies to the
   * same {@link Replies}.
   */
  public SimGroup restoredFromSnapshot() {
    Output out = new Output(1 << 16, -1);
    GroupStateSnapshot.write(state, out);
    SimGroup next = initial.get();
    GroupStateSnapshot.read(next.state, new Input(out.toBytes()));
    return next;
  }
}
