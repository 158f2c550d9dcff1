package io.eyrie.multicast.internal.state;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.Wire.Decision;
import java.util.Arrays;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The retention table {@code Proposed} of design 4.3.1 (rule 8): every multi-destination message
 * this group made pending, with its local timestamp and, once decided, its decision, kept until
 * the message is delivered here and every other destination's {@code Decided} is recorded. Pulls
 * are answered from it, so a destination whose leader lost what it had collected can always
 * complete, and a {@code Propose} of the same message cannot arrive after its entry is gone.
 * Owns its snapshot section (written in id order).
 */
final class Retention {
  /** One retained message. */
  static final class Entry {
    final MsgId id;
    final GroupId[] dests;
    final long digest;
    final long lts;
    /** This group's decision, once decided here. */
    Decision decision;
    boolean delivered;
    /** The other destinations whose {@code Decided} was recorded here. */
    final TreeSet<GroupId> acked = new TreeSet<>();
    /** The destinations a {@code Forward} here sent the message to (at most once each). */
    final TreeSet<GroupId> forwardedTo = new TreeSet<>();
    /** Groups that sent another version of the message (they get this group's decision too). */
    final TreeSet<GroupId> otherVersions = new TreeSet<>();
    /** Components taken from the log ({@code Conflict} items of destinations), by group. */
    final TreeMap<GroupId, Long> logged = new TreeMap<>();

    Entry(MsgId id, GroupId[] dests, long digest, long lts) {
      this.id = id;
      this.dests = dests;
      this.digest = digest;
      this.lts = lts;
    }

    /** True once the message is delivered here and every other destination acknowledged its decision. */
    boolean done(GroupId self) {
      if (!delivered) {
        return false;
      }
      if (dropAtDeliveryForTest) {
        return true;
      }
      for (GroupId d : dests) {
        if (!d.equals(self) && !acked.contains(d)) {
          return false;
        }
      }
      return true;
    }
  }

  /**
   * Test-only switch for the simulation's positive control "drop retention at delivery" (never set
   * outside tests): when true, an entry is dropped as soon as its message is delivered here,
   * without waiting for the other destinations' {@code Decided}, which rule 8 forbids.
   */
  static boolean dropAtDeliveryForTest;

  private final GroupId self;
  final TreeMap<MsgId, Entry> entries = new TreeMap<>();

  Retention(GroupId self) {
    this.self = self;
  }

  Entry get(MsgId id) {
    return entries.get(id);
  }

  Entry add(MsgId id, GroupId[] dests, long digest, long lts) {
    Entry e = new Entry(id, dests, digest, lts);
    entries.put(id, e);
    return e;
  }

  /** Drops the entry if its retention ended (checked at delivery and at each acknowledgement). */
  void dropIfDone(Entry e) {
    if (e != null && e.done(self)) {
      entries.remove(e.id);
    }
  }

  int size() {
    return entries.size();
  }

  void writeTo(Output out) {
    out.writeVarInt(entries.size(), true);
    for (Entry e : entries.values()) {
      SnapshotIo.writeId(out, e.id);
      SnapshotIo.writeGroups(out, new TreeSet<>(Arrays.asList(e.dests)));
      out.writeLong(e.digest);
      out.writeVarLong(e.lts, true);
      out.writeBoolean(e.decision != null);
      if (e.decision != null) {
        out.writeVarLong(e.decision.digest() == e.digest ? 0 : 1, true);
        if (e.decision.digest() != e.digest) {
          out.writeLong(e.decision.digest());
        }
        out.writeBoolean(e.decision.conflict());
        for (long t : e.decision.ts()) {
          out.writeVarLong(t, true);
        }
      }
      out.writeBoolean(e.delivered);
      SnapshotIo.writeGroups(out, e.acked);
      SnapshotIo.writeGroups(out, e.forwardedTo);
      SnapshotIo.writeGroups(out, e.otherVersions);
      out.writeVarInt(e.logged.size(), true);
      for (var l : e.logged.entrySet()) {
        out.writeString(l.getKey().name());
        out.writeVarLong(l.getValue(), true);
      }
    }
  }

  void readFrom(Input in) {
    entries.clear();
    int n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      MsgId id = SnapshotIo.readId(in);
      GroupId[] dests = SnapshotIo.readGroups(in).toArray(new GroupId[0]);
      long digest = in.readLong();
      long lts = in.readVarLong(true);
      Entry e = add(id, dests, digest, lts);
      if (in.readBoolean()) {
        long d = in.readVarLong(true) == 0 ? digest : in.readLong();
        boolean conflict = in.readBoolean();
        long[] ts = new long[dests.length];
        for (int j = 0; j < ts.length; j++) {
          ts[j] = in.readVarLong(true);
        }
        e.decision = new Decision(id, dests, ts, d, conflict);
      }
      e.delivered = in.readBoolean();
      e.acked.addAll(SnapshotIo.readGroups(in));
      e.forwardedTo.addAll(SnapshotIo.readGroups(in));
      e.otherVersions.addAll(SnapshotIo.readGroups(in));
      int k = in.readVarInt(true);
      for (int j = 0; j < k; j++) {
        e.logged.put(GroupId.valueOf(in.readString()), in.readVarLong(true));
      }
    }
  }
}
