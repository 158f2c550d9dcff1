package io.eyrie.multicast.internal.state;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.internal.StatusCodes;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BiConsumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * What makes execution exactly-once at one group: per client, the watermark, the messages
 * delivered here and the stored replies; the replicated log time that measures how long a client
 * has been idle; the expiry sweep; and the tombstones left by expired records. Kept apart because
 * expiry is the delicate part of the state: whether a message is still in progress is asked of
 * the other parts through the predicates and sets passed in.
 */
final class ClientTable {
  /** Tombstones are kept this many expiry periods (but see {@link #MIN_TOMBSTONE_MS}). */
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

  private final long expiryMs;
  private long logTime;
  private long nextSweep;
  private final HashMap<Long, ClientRecord> records = new HashMap<>();
  /**
   * Clients whose records expired: the log time of expiry and the highest seq this group ever
   * made pending for the client. A Start with a seq up to that one and not known here is refused
   * (a resend could otherwise execute again), even once a proposal recreated a record; a higher
   * seq cannot have been executed here (a client allocates seqs in increasing order) and is
   * accepted. Kept {@link #TOMBSTONE_FACTOR} expiry periods but at least
   * {@link #MIN_TOMBSTONE_MS}, and while a recreated record exists.
   */
  final HashMap<Long, Tombstone> tombstones = new HashMap<>();

  ClientTable(long expiryMs) {
    this.expiryMs = expiryMs;
  }

  /** What is left of an expired client record: when it expired, and its highest pending seq. */
  record Tombstone(long since, long maxSeq) {}

  /** One client's record. */
  static final class ClientRecord {
    long watermark;
    long lastSeen;
    /** The highest seq made pending here since this record was created, or -1. */
    long maxPending = -1;
    final HashSet<MsgId> delivered = new HashSet<>();
    final HashMap<MsgId, StoredReply> replies = new HashMap<>();
  }

  /** The replicated time of the latest start batch (bounded steps), 0 before the first. */
  long logTime() {
    return logTime;
  }

  /** Moves the log time towards a start batch's time, by {@link #MAX_LOG_TIME_STEP_MS} at most. */
  void advanceLogTime(long batchTime) {
    if (batchTime > logTime) {
      logTime = logTime == 0 ? batchTime : Math.min(batchTime, saturatedAdd(logTime, MAX_LOG_TIME_STEP_MS));
    }
  }

  /** Returns a client's record, or {@code null}; not counted as activity. */
  ClientRecord get(long client) {
    return records.get(client);
  }

  /** Returns a client's record, creating it if needed; every use counts as activity. */
  ClientRecord touch(long client) {
    ClientRecord rec = records.computeIfAbsent(client, k -> new ClientRecord());
    rec.lastSeen = Math.max(rec.lastSeen, logTime);
    return rec;
  }

  /** The stored reply for a message, or {@code null}. */
  StoredReply reply(MsgId id) {
    ClientRecord rec = records.get(id.client());
    return rec == null ? null : rec.replies.get(id);
  }

  /** Gives every stored reply to {@code to}, in no particular order. */
  void forEachReply(BiConsumer<MsgId, StoredReply> to) {
    for (ClientRecord rec : records.values()) {
      rec.replies.forEach(to);
    }
  }

  /**
   * Raises a client's watermark and forgets what it covers, except what is still in progress:
   * delivered ids of messages still executing.
   *
   * @return true if the watermark moved
   */
  boolean advanceWatermark(ClientRecord rec, long watermark, Predicate<MsgId> executing) {
    if (watermark <= rec.watermark) {
      return false;
    }
    rec.watermark = watermark;
    rec.delivered.removeIf(id -> id.seq() < watermark && !executing.test(id));
    rec.replies.keySet().removeIf(id -> id.seq() < watermark);
    return true;
  }

  /**
   * True if the message's client expired here and the message may have executed here before:
   * its seq is one this group made pending once and it is not known here now.
   *
   * @param pendingHere whether the message is pending here
   */
  boolean mayHaveExecutedBeforeExpiry(MsgId id, boolean pendingHere) {
    Tombstone tomb = tombstones.get(id.client());
    if (tomb == null || pendingHere) {
      return false;
    }
    ClientRecord rec = records.get(id.client());
    // The highest seq made pending here, counting a record recreated since the expiry.
    long maxSeq = rec == null ? tomb.maxSeq : Math.max(tomb.maxSeq, rec.maxPending);
    return id.seq() <= maxSeq && (rec == null || !rec.delivered.contains(id));
  }

  /**
   * Drops the records of clients idle (in log time) for longer than the expiry and leaves a
   * tombstone for each. A record is kept while its client is in {@code active} (a message of its
   * is pending, queued, retained (design 4.3.1, rule 8) or has buffered items here). A tombstone is kept
   * for {@link #TOMBSTONE_FACTOR} expiry periods, and as long as a record recreated by a proposal
   * exists (such a record does not know what was executed before the expiry).
   */
  void sweep(Supplier<Set<Long>> active) {
    if (logTime < nextSweep) {
      return;
    }
    nextSweep = saturatedAdd(logTime, Math.max(1, expiryMs / 10));
    Set<Long> busy = active.get();
    // Each decision depends only on its own entry, so the hash order does not matter.
    records.entrySet().removeIf(e -> {
      // A record created before this group applied its first client start (from a proposal
      // over a channel, which carries no time) has lastSeen 0: it was seen just now, not in 1970.
      if (e.getValue().lastSeen == 0) {
        e.getValue().lastSeen = logTime;
      }
      if (logTime - e.getValue().lastSeen > expiryMs && !busy.contains(e.getKey())) {
        Tombstone old = tombstones.get(e.getKey());
        tombstones.put(e.getKey(), new Tombstone(logTime,
            old == null ? e.getValue().maxPending : Math.max(old.maxSeq, e.getValue().maxPending)));
        return true;
      }
      return false;
    });
    long keep = expiryMs > Long.MAX_VALUE / TOMBSTONE_FACTOR ? Long.MAX_VALUE
        : Math.max(MIN_TOMBSTONE_MS, TOMBSTONE_FACTOR * expiryMs);
    tombstones.entrySet().removeIf(e -> logTime - e.getValue().since > keep && !records.containsKey(e.getKey()));
  }

  static long saturatedAdd(long a, long b) {
    long r = a + b;
    return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
  }

  /** Describes a message's client record, for diagnosis. */
  String describeRecord(MsgId id) {
    ClientRecord rec = records.get(id.client());
    return rec == null ? " no client record" : " record(watermark=" + rec.watermark + ", delivered="
        + rec.delivered.contains(id) + ", reply=" + rec.replies.get(id) + ")";
  }

  /** Writes the log time, the next sweep, the records and the tombstones, in client order. */
  void writeTo(Output out) {
    out.writeVarLong(logTime, true);
    out.writeVarLong(nextSweep, true);
    out.writeVarInt(records.size(), true);
    for (Long cid : new TreeSet<>(records.keySet())) {
      ClientRecord r = records.get(cid);
      out.writeLong(cid);
      out.writeVarLong(r.watermark, true);
      out.writeVarLong(r.lastSeen, true);
      out.writeLong(r.maxPending);
      out.writeVarInt(r.delivered.size(), true);
      for (MsgId id : new TreeSet<>(r.delivered)) {
        SnapshotIo.writeId(out, id);
      }
      out.writeVarInt(r.replies.size(), true);
      for (MsgId id : new TreeSet<>(r.replies.keySet())) {
        StoredReply rep = r.replies.get(id);
        SnapshotIo.writeId(out, id);
        out.writeVarInt(StatusCodes.code(rep.status()), true);
        SnapshotIo.writeBytes(out, rep.body());
        out.writeString(rep.error());
      }
    }
    out.writeVarInt(tombstones.size(), true);
    for (Map.Entry<Long, Tombstone> e : new TreeMap<>(tombstones).entrySet()) {
      out.writeLong(e.getKey());
      out.writeVarLong(e.getValue().since(), true);
      out.writeLong(e.getValue().maxSeq());
    }
  }

  void readFrom(Input in) {
    logTime = in.readVarLong(true);
    nextSweep = in.readVarLong(true);
    int n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      long cid = in.readLong();
      ClientRecord r = new ClientRecord();
      r.watermark = in.readVarLong(true);
      r.lastSeen = in.readVarLong(true);
      r.maxPending = in.readLong();
      int k = in.readVarInt(true);
      for (int j = 0; j < k; j++) {
        r.delivered.add(SnapshotIo.readId(in));
      }
      k = in.readVarInt(true);
      for (int j = 0; j < k; j++) {
        MsgId id = SnapshotIo.readId(in);
        Status status = StatusCodes.status(in.readVarInt(true));
        byte[] body = SnapshotIo.readBytes(in);
        r.replies.put(id, new StoredReply(status, body, in.readString()));
      }
      records.put(cid, r);
    }
    n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      long cid = in.readLong();
      long since = in.readVarLong(true);
      tombstones.put(cid, new Tombstone(since, in.readLong()));
    }
  }
}
