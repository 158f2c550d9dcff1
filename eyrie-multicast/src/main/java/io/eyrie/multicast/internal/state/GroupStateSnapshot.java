package io.eyrie.multicast.internal.state;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.GroupId;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Writes and reads the whole replicated state of a group, as one section per part of
 * {@link GroupState}: the ordering (clock, pending messages), the execution queue (queue, parked
 * head, buffered items, replies awaiting started-signals), the channels (outboxes, positions),
 * the client table (log time, records, tombstones), then the counters and the application's
 * state. Each part writes and reads its own section; this class only fixes their order. Maps are
 * written in key order, so equal states give equal bytes. The header and the trailing extensions,
 * and which versions this build reads, are {@link SnapshotFormat}'s.
 */
public final class GroupStateSnapshot {
  private GroupStateSnapshot() {}

  /** Writes the state. */
  public static void write(GroupState s, Output out) {
    // No part of the state has an extension yet (SnapshotFormat).
    write(s, out, new TreeMap<>());
  }

  /** Writes the state with extensions (tag to bytes), which a reader that does not know them skips. */
  static void write(GroupState s, Output out, SortedMap<Integer, byte[]> extensions) {
    int version = SnapshotFormat.writeHeader(out, !extensions.isEmpty());
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
    SnapshotFormat.writeExtensions(out, version, extensions);
  }

  /**
   * Replaces the state with one written by {@link #write}. The state must be freshly created
   * for the same group.
   */
  public static void read(GroupState s, Input in) {
    int version = SnapshotFormat.readHeader(in);
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
    // This build knows no extension: a newer writer's, if any, are skipped (SnapshotFormat).
    SnapshotFormat.readExtensions(in, version);
    s.app.restore(app == null ? new byte[0] : app);
  }
}
