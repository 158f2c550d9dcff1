package io.eyrie.multicast.internal;

import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.Status;
import java.util.Arrays;
import java.util.Objects;

/** Messages of the multicast protocol: log entries, channel items and client frames. */
public final class Wire {
  private Wire() {}

  /**
   * A client's multicast: the message with its id, destinations (ascending, no repeats), the
   * group whose reply the client waits for, the encoded payload, and the client's watermark
   * (its lowest unfinished sequence number).
   */
  public record Start(MsgId id, GroupId[] dests, GroupId replyGroup, byte[] payload, long watermark) {
    /** True if the two starts describe the same message content (id, dests, reply group, payload). */
    public boolean sameContent(Start o) {
      return id.equals(o.id) && Arrays.equals(dests, o.dests) && replyGroup.equals(o.replyGroup)
          && Arrays.equals(payload, o.payload);
    }
  }

  /** Log entry: client starts submitted together, with the submitting node's wall-clock time. */
  public record StartBatch(long time, Start[] starts) {}

  /**
   * Log entry: channel items from group {@code from}, the first with sequence number
   * {@code firstSeq}, and the sender's own next expected sequence number from the receiver
   * ({@code ackForYou}), which lets the receiver trim its outbox.
   */
  public record ChannelBatch(GroupId from, long firstSeq, Object[] items, long ackForYou) {}

  /** Channel item: the sender's timestamp proposal for a message, with the whole message. */
  public record Propose(Start start, long ts) {}

  /**
   * Channel item: application data for a message (object values, verdicts, signals), encoded by
   * the sending group when the application sent it. Encoding at that point (on the apply thread)
   * makes an unencodable item a deterministic error of the sending message instead of a batch the
   * channel can never ship, and freezes the value: the application may change the object later
   * without changing what is shipped or snapshotted. The receiver decodes it when the application
   * reads it ({@link io.eyrie.multicast.ExecutionContext#received}).
   */
  public record Data(MsgId id, byte[] value) {}

  /** Channel item: the sender has begun executing the message (execution atomicity). */
  public record Started(MsgId id) {}

  /**
   * Channel item: the sender holds another message under the same id (a reused id). It answers a
   * proposal the sender would otherwise never answer (the receiver counts the sender among the
   * message's destinations, the sender does not): {@code ts} stands for the sender's proposal, so
   * the receiver can decide, and the receiver must not execute its version.
   */
  public record Conflict(MsgId id, long ts) {}

  /**
   * Channel item: the sender ended the message without executing it, because it learned of
   * another message under the same id (a reused id, review N4), and sends nothing else for it. It
   * goes to the other destinations of the sender's version, so that none waits for ever for items
   * the sender will never send: one where the message has not started marks it conflicting too,
   * one where it has started gets an item without value from the sender
   * ({@link io.eyrie.multicast.ExecutionContext#abandonedBy}).
   */
  public record Abandoned(MsgId id) {}

  /**
   * A group change, multicast by an operator to every group as an ordinary message and executed
   * by Eyrie, not the application: the group becomes known (with {@code open} false) or open to
   * clients (with {@code open} true) at each destination when it is delivered there.
   *
   * @param group the added group
   * @param kind its kind ("partition")
   * @param members the nodes that hold its replicas
   * @param open whether clients may now name it
   */
  public record GroupChange(GroupId group, String kind, int[] members, boolean open) {}

  /**
   * A client asks a node for the cluster as the node knows it (its cluster file with the open
   * groups added since); the answer's body is the configuration's text form.
   */
  public record ViewRequest(long requestId) {}

  /**
   * A linearizable query Eyrie answers itself, not the application: what the queried group knows
   * of a group (the answer is 0 unknown, 1 known, 2 open).
   */
  public record GroupQuery(GroupId group) {}

  /**
   * A linearizable query Eyrie answers itself, not the application: the groups the queried
   * group knows but has not opened, whose addition stopped halfway (the answer is their names,
   * ascending, as a {@code String[]}). {@link io.eyrie.multicast.ClusterAdmin#addGroup} asks it
   * before adding a group.
   */
  public record HalfwayQuery() {}

  /** Client frame: a request to multicast. */
  public record ClientRequest(long requestId, Start start) {}

  /** Client frame: a linearizable read-only query to one group. */
  public record QueryRequest(long requestId, GroupId group, byte[] query) {}

  /**
   * Client frame: the answer to a request. {@code body} is the encoded reply when the status is
   * OK; {@code error} explains any other status. {@code leaderHint} is the node the client should
   * prefer for the reply group, or 0. The status is never null (see {@link StatusCodes}).
   */
  public record ClientReply(long requestId, Status status, byte[] body, String error, int leaderHint) {
    public ClientReply {
      Objects.requireNonNull(status, "status");
    }
  }
}
