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

    /**
     * The digest of the message's content (destinations, reply group, payload): the first 8 bytes
     * of its SHA-256. Two versions of a message under one id (a reused id) have different digests.
     */
    public long digest() {
      try {
        java.security.MessageDigest md = java.security.MessageDigest.getInstance("SHA-256");
        for (GroupId d : dests) {
          md.update(d.name().getBytes(java.nio.charset.StandardCharsets.UTF_8));
          md.update((byte) 0);
        }
        md.update((byte) 1);
        md.update(replyGroup.name().getBytes(java.nio.charset.StandardCharsets.UTF_8));
        md.update((byte) 0);
        md.update(payload);
        return java.nio.ByteBuffer.wrap(md.digest()).getLong();
      } catch (java.security.NoSuchAlgorithmException e) {
        throw new IllegalStateException("every JVM has SHA-256", e);
      }
    }
  }

  /**
   * Log entry: client starts submitted together, with the submitting node's wall-clock time, and
   * the decisions and forwards its leader had ready (design 4.3.1, rules 5 and 9). Decisions are
   * applied before forwards, and both before the starts, so that new starts get timestamps above
   * the decided ones. An entry with no start carries no time ({@code time < 0}): it never moves
   * the log time (K12).
   */
  public record StartBatch(long time, Start[] starts, Decision[] decides, Forward[] forwards) {
    public StartBatch {
      starts = starts == null ? new Start[0] : starts;
      decides = decides == null ? new Decision[0] : decides;
      forwards = forwards == null ? new Forward[0] : forwards;
    }

    /** A batch of starts only. */
    public StartBatch(long time, Start[] starts) {
      this(time, starts, null, null);
    }
  }

  /**
   * A decision of a multi-group message (design 4.3.1, rule 5): every destination's local
   * timestamp ({@code groups} ascending, {@code ts} in the same order), the digest of the version
   * the decider holds ({@link Start#digest}), and whether it saw another version of the message (a
   * reused id). Logged by a leader of a destination in a {@link StartBatch}, and sent to the
   * other destinations in a {@link Decided}.
   */
  public record Decision(MsgId id, GroupId[] groups, long[] ts, long digest, boolean conflict) {
    /** The final timestamp: the largest local timestamp. */
    public long finalTs() {
      long max = 0;
      for (long t : ts) {
        max = Math.max(max, t);
      }
      return max;
    }

    /** The local timestamp of {@code g}, or -1 if it is not among the groups. */
    public long tsOf(GroupId g) {
      int i = Arrays.binarySearch(groups, g);
      return i < 0 ? -1 : ts[i];
    }
  }

  /**
   * A leader's request to create a message at destinations that did not answer for it (design
   * 4.3.1, rule 9): applied while the message is undecided here, it sends each named destination
   * a {@link Propose} with the message, at most once per destination ever.
   */
  public record Forward(MsgId id, GroupId[] to) {}

  /**
   * Channel item: the sender decided the message (design 4.3.1, rule 7). The receiver records the
   * sender's acknowledgement (retention ends when every destination's is in) and, if the message
   * is still undecided there, decides it with the same decision.
   */
  public record Decided(Decision decision) {}

  /**
   * What one destination knows of a message (design 4.3.1, "component"): its local timestamp,
   * the digest of its version, and its decision once decided ({@code decision} null before).
   * Read from applied state only, sent between nodes unlogged.
   */
  public record Component(MsgId id, GroupId group, long lts, long digest, Decision decision) {}

  /**
   * Unlogged, between nodes (a query over the node-to-node link, which only node identities may
   * send, or a read-only Ratis query when the link fails): the sender's components of
   * messages it holds undecided, for the receiving group. The receiver keeps them for its leader's
   * decisions and answers with its own components of the same messages (a push and a pull).
   */
  public record Components(GroupId to, Component[] list) {}

  /**
   * Unlogged, between nodes (a query to any replica of a group, as {@link Components}): which of these
   * messages have started at the group, on positive evidence in the answering replica's applied
   * state (design 4.3.1, rule 11). The answer is the started ones' ids, as a {@code MsgId[]}.
   */
  public record StartedQuery(MsgId[] ids) {}

  /**
   * Log entry: channel items from group {@code from}, the first with sequence number
   * {@code firstSeq}, and the sender's own next expected sequence number from the receiver
   * ({@code ackForYou}), which lets the receiver trim its outbox.
   */
  public record ChannelBatch(GroupId from, long firstSeq, Object[] items, long ackForYou) {}

  /**
   * Channel item: the whole message, sent by a destination's {@link Forward} to a destination
   * that did not know it (design 4.3.1, rule 9). It creates the message at the receiver unless
   * known there; it is never refused.
   */
  public record Propose(Start start) {}

  /**
   * Channel item: application data for a message (object values, verdicts, signals), encoded by
   * the sending group when the application sent it. Encoding at that point (on the apply thread)
   * makes an unencodable item a deterministic error of the sending message instead of a batch the
   * channel can never ship, and freezes the value: the application may change the object later
   * without changing what is shipped or snapshotted. The receiver decodes it when the application
   * reads it ({@link io.eyrie.multicast.ExecutionContext#received}).
   */
  public record Data(MsgId id, byte[] value) {}

  /**
   * Channel item: the sender holds another message under the same id (a reused id). It answers a
   * {@link Propose} the sender would otherwise never answer: {@code ts} stands for the sender's
   * component (the receiver counts it if the sender is among its version's destinations), and
   * the receiver must not execute its version.
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

  /**
   * Client frame: a linearizable read-only query to one group. A query of no bytes instead asks
   * the node that takes it for the status of every group ({@code GroupStatus}), which the node
   * asks the Raft servers over its own Raft connections (the Raft port takes only nodes); it needs
   * the admin role, and the answer is the statuses' text form.
   */
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
