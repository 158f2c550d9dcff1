package io.eyrie.core.protocol;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.PRObject;
import io.eyrie.multicast.GroupId;
import java.util.TreeMap;

/** The DS-SMR protocol's messages: multicast payloads, channel items, queries and replies. */
public final class Msgs {
  private Msgs() {}

  /** Multicast to one partition: execute the command if all its objects are local. */
  public record AccessReq(Command cmd) {}

  /** Multicast to {oracle, src, dst}: move the objects that src holds to dst. */
  public record MoveReq(ObjId[] objs, GroupId src, GroupId dst) {}

  /** Multicast to {oracle, partition}: create the command's object in the partition if it exists nowhere. */
  public record CreateReq(Command cmd, GroupId partition) {}

  /** Multicast to {oracle, partition}: delete the command's object, which the client believes is there. */
  public record DeleteReq(Command cmd, GroupId partition) {}

  /** Multicast to several partitions (and maybe the oracle): execute with S-SMR execution atomicity. */
  public record SsmrReq(Command cmd) {}

  /**
   * Channel item: values of objects (a move's payload, or S-SMR's value exchange), or why the
   * sender could not ship them (an object that cannot be encoded); the receiver then answers an
   * error instead of waiting for ever.
   */
  public record Values(TreeMap<ObjId, PRObject> objects, String error) {
    public static Values of(TreeMap<ObjId, PRObject> objects) {
      return new Values(objects, null);
    }

    public static Values failed(String why) {
      return new Values(new TreeMap<>(), why);
    }
  }

  /**
   * Channel item: the oracle's verdict on a create or delete, where the object is (or goes), and
   * for a REFUSED verdict why (the application's exception, at most {@link #REASON_MAX} chars).
   */
  public record Verdict(Status status, GroupId location, String reason) {
    /** The longest reason a verdict carries. */
    public static final int REASON_MAX = 300;

    /** What the oracle decided. */
    public enum Status {
      /** The map changed: the object is placed at {@code location}, or removed from it. */
      OK,
      /** Nothing to do: a create's object exists already (at {@code location}), or a delete's is missing. */
      NOK,
      /** The command's view is stale (a retired partition, a partition it missed, the object elsewhere): ask again. */
      RETRY,
      /** The command was refused ({@code reason} says why) and the map did not change. */
      REFUSED
    }

    /** A verdict without a reason. */
    public Verdict(Status status, GroupId location) {
      this(status, location, null);
    }
  }

  /**
   * Channel item from a partition to the oracle: the partition has reached a create, delete or
   * move at the head of its execution queue (everything ordered before it there is done,
   * everything arriving later is ordered after it). The oracle changes its map (and, for a create
   * or delete, sends its verdict) only once every partition destination has sent this (execution
   * atomicity); for a move, only the source sends it, once its values have left.
   *
   * <p>{@code refusal} is null, or why the partition cannot carry the command out, decided when it
   * started: the application's {@code createObject} failed or returned an object that cannot be
   * stored, or a move's values could not be shipped. The oracle then refuses the create (its map
   * never names the object) or leaves the map as it was for the move.
   */
  public record Begun(GroupId partition, String refusal) {
    /** The longest refusal carried. */
    public static final int REFUSAL_MAX = 300;

    /** A partition that can carry the command out. */
    public Begun(GroupId partition) {
      this(partition, null);
    }

    /** A partition that cannot, and why (cut to {@link #REFUSAL_MAX} characters). */
    public static Begun refused(GroupId partition, String why) {
      String w = why == null ? "refused" : why;
      return new Begun(partition, w.length() <= REFUSAL_MAX ? w : w.substring(0, REFUSAL_MAX));
    }
  }

  /**
   * Query to one partition: execute a command that changes nothing on its objects now, without
   * a log entry, if they are all here and no command in progress here holds or waits for them.
   * Answered OK with the value, RETRY if an object is not here (or the application asks for more
   * objects), or BUSY: then the client sends the command through the log.
   */
  public record ReadReq(Command cmd) {}

  /** Query to the oracle: where are the command's objects, or what is the outcome. */
  public record ConsultReq(Command cmd) {}

  /**
   * The oracle's answer to a consult: a status (NOK settles the command without executing it;
   * RETRY means "here are the locations"), the locations, and the partition the objects should
   * be moved to (or where a new object goes).
   */
  public record Prophecy(Status status, TreeMap<ObjId, GroupId> locations, GroupId target, ObjId subject) {
    /** What the oracle prophesies. */
    public enum Status {
      /** The command fails without executing: {@code subject} is missing, or exists already for a create. */
      NOK,
      /** The command goes on: here are the locations and the target. */
      RETRY
    }

    /** A prophecy without a subject. */
    public Prophecy(Status status, TreeMap<ObjId, GroupId> locations, GroupId target) {
      this(status, locations, target, null);
    }

    /** A negative prophecy about one object: the one missing, or the one that exists already. */
    public static Prophecy nok(ObjId subject) {
      return new Prophecy(Status.NOK, null, null, subject);
    }
  }

  /** Query to a partition: its counters. Query to the oracle: its map (for audits). */
  public record StatsReq(boolean withObjects) {}

  /** A partition's answer to {@link StatsReq}. */
  public record PartitionStatsReply(long objects, long executed, long multiPartition, long retries,
      long[] objectIds) {}

  /** The oracle's answer to {@link StatsReq}. */
  public record OracleMapReply(TreeMap<ObjId, GroupId> locations) {}

  /**
   * Query to the oracle: up to {@code max} objects whose partition differs from its learned
   * plan (GRAPH placement; none otherwise), for a rebalancer to move.
   */
  public record PlanReq(int max) {}

  /**
   * Query to a partition: the objects of the single-partition commands it sampled since the last
   * such query (its leader's replica answers; not replicated). The rebalancer hands them to the
   * oracle ({@link Observed}), so that the learned placement also sees the accesses that need no
   * consult and keeps objects that are used together where they are.
   */
  public record SamplesReq() {}

  /**
   * A partition's sampled accesses, or the oracle's input of them: each entry the objects of one
   * sampled command; {@code weight} is how many commands each sample stands for.
   */
  public record Observed(java.util.ArrayList<long[]> accesses, double weight) {}

  /**
   * An ordered command to the oracle alone: make {@code partition} active (it takes new objects
   * and gathered ones) or retire it (nothing new goes there, and a rebalancer's plan moves its
   * objects out first: draining). The partition must be a group the oracle knows (one of the
   * cluster file's, or one added to the running cluster). Answered with the new
   * {@link io.eyrie.core.PartitionTable}.
   */
  public record PartitionChange(GroupId partition, boolean active) {}

  /** Query to the oracle: its {@link io.eyrie.core.PartitionTable}. */
  public record PartitionTableReq() {}

  /** The oracle's answer to {@link PlanReq}: where each object is ({@code from}) and where the plan wants it ({@code to}). */
  public record PlanMoves(TreeMap<ObjId, GroupId> from, TreeMap<ObjId, GroupId> to) {}

  /**
   * A reply to a command: status, the application's value (OK) or why not, and objects to
   * co-locate (RETRY) or the object missing (NOT_FOUND) or existing (EXISTS).
   */
  public record CoreReply(Status status, Object value, ObjId[] extra) {
    /** What happened to the command. */
    public enum Status {
      /** The command was executed; the value is the application's reply. */
      OK,
      /** The command's objects are not all here: locate them again, with {@code extra} if any. */
      RETRY,
      /** An object the command needs does not exist (named in {@code extra}). */
      NOT_FOUND,
      /** The object a create names exists already (named in {@code extra}). */
      EXISTS,
      /** The command was refused (the value says why) and changed nothing. */
      REFUSED,
      /** A partition's answer to a {@link ReadReq} it does not serve now: send the command through the log. */
      BUSY
    }

    public static CoreReply ok(Object value) {
      return new CoreReply(Status.OK, value, null);
    }

    public static CoreReply notFound(ObjId id) {
      return new CoreReply(Status.NOT_FOUND, "object " + id + " does not exist", new ObjId[] {id});
    }

    public static CoreReply exists(ObjId id) {
      return new CoreReply(Status.EXISTS, "object " + id + " already exists", new ObjId[] {id});
    }

    public static CoreReply refused(String why) {
      return new CoreReply(Status.REFUSED, why, null);
    }

    public static CoreReply retry(ObjId[] extra) {
      return new CoreReply(Status.RETRY, null, extra);
    }

    public static CoreReply busy(String why) {
      return new CoreReply(Status.BUSY, why, null);
    }
  }
}
