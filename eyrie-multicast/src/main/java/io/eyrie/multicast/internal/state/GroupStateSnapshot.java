package io.eyrie.multicast.internal.state;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.GroupId;

/**
 * Writes and reads the whole replicated state of a group, as one section per part of
 * {@link GroupState}: the ordering (clock, pending messages), the execution queue (queue, parked
 * head, buffered items, replies awaiting started-signals), the channels (outboxes, positions),
 * the client table (log time, records, tombstones), then the counters and the application's
 * state. Each part writes and reads its own section; this class only fixes their order. Maps are
 * written in key order, so equal states give equal bytes.
 */
public final class GroupStateSnapshot {
  /**
   * 3: one section per part of the state (the log time and the next sweep moved to the client
   * table's section). 2 added the highest pending seqs (review F3), encoded Data items (F6) and
   * conflicting messages (F7). Older snapshots are refused.
   */
  private static final int VERSION = 7; // 5: the groups this group knows of (groups added to a running cluster); 6: deferred messages; 7: the retention table, no replies awaiting started-signals (design 4.3.1)

  private GroupStateSnapshot() {}

  /** Writes the state. */
  public static void write(GroupState s, Output out) {
    out.writeInt(VERSION);
    out.writeString(s.self.name());
    s.members.writeTo(out);
    s.order.writeTo(out, s.codec);
    s.retention.writeTo(out);
    s.exec.writeTo(out);
    s.outboxes.writeTo(out, s.codec);
    s.clients.writeTo(out);
    StateCounters st = s.stats;
    for (long v : new long[] {st.entries, st.delivered, st.deliveredMulti, st.executed, st.parks, st.duplicates,
        st.itemsSent, st.itemsReceived}) {
      out.writeVarLong(v, true);
    }
    SnapshotIo.writeBytes(out, s.app.snapshot());
  }

  /**
   * Replaces the state with one written by {@link #write}. The state must be freshly created
   * for the same group.
   */
  public static void read(GroupState s, Input in) {
    int version = in.readInt();
    if (version != VERSION) {
      throw new IllegalStateException("unsupported snapshot version " + version + " (this build reads version "
          + VERSION + ")");
    }
    String self = in.readString();
    if (!self.equals(s.self.name())) {
      throw new IllegalStateException("snapshot of group " + self + " cannot restore group " + s.self);
    }
    s.members.readFrom(in);
    s.order.readFrom(in, s.codec);
    s.retention.readFrom(in);
    s.exec.readFrom(in);
    // The snapshot's channels replace those of the fresh state (which opened channels to the
    // groups it started knowing); every known group has one (a snapshot writes them all).
    s.outboxes.readFrom(in, s.codec);
    for (GroupId g : s.members.known().keySet()) {
      s.outboxes.addPeer(g);
    }
    s.clients.readFrom(in);
    StateCounters st = s.stats;
    st.entries = in.readVarLong(true);
    st.delivered = in.readVarLong(true);
    st.deliveredMulti = in.readVarLong(true);
    st.executed = in.readVarLong(true);
    st.parks = in.readVarLong(true);
    st.duplicates = in.readVarLong(true);
    st.itemsSent = in.readVarLong(true);
    st.itemsReceived = in.readVarLong(true);
    byte[] app = SnapshotIo.readBytes(in);
    s.app.restore(app == null ? new byte[0] : app);
  }
}
