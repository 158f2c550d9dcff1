package io.eyrie.oracle;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.core.ObjId;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The oracle's snapshot format, written and read in one place. In order: the location map (each
 * object's id and partition name), the verdict chains (each object's id and its waiting message
 * ids), the application's extra state (encoded with the service's codec; empty for none) and the
 * partition table (each partition's name and whether it is active). The load is not written: it
 * is counted again from the map. An empty snapshot is the initial state (the cluster file's
 * table); a snapshot that ends before the table section predates the table and gets the initial
 * one; a snapshot from before issue 26 (a queued move in a chain) cannot be read.
 */
record OracleSnapshot(OracleStateMachine app, Codec codec, LocationMap map, VerdictChains chains,
    PartitionTableState table) {
  byte[] write() {
    Output out = new Output(4096, -1);
    out.writeVarInt(map.view().size(), true);
    for (Map.Entry<ObjId, GroupId> e : map.view().entrySet()) {
      out.writeLong(e.getKey().value());
      out.writeString(e.getValue().name());
    }
    out.writeVarInt(chains.view().size(), true);
    for (Map.Entry<ObjId, ? extends Collection<MsgId>> e : chains.view().entrySet()) {
      out.writeLong(e.getKey().value());
      out.writeVarInt(e.getValue().size(), true);
      for (MsgId m : e.getValue()) {
        out.writeBoolean(true); // (false marked a queued move, in snapshots before issue 26)
        out.writeLong(m.client());
        out.writeLong(m.seq());
        out.writeVarInt(m.attempt(), true);
      }
    }
    Object extra = app.extraState();
    byte[] bytes = extra == null ? new byte[0] : codec.encode(extra);
    out.writeVarInt(bytes.length, true);
    out.writeBytes(bytes);
    out.writeVarInt(table.view().size(), true);
    for (Map.Entry<GroupId, Boolean> e : table.view().entrySet()) {
      out.writeString(e.getKey().name());
      out.writeBoolean(e.getValue());
    }
    return out.toBytes();
  }

  /** Replaces the oracle's state, the application's included, with the snapshot's. */
  void read(byte[] state) {
    map.clear();
    chains.clear();
    if (state.length == 0) { // the initial state: the cluster file's partitions
      table.reset();
      app.restoreExtraState(null);
      return;
    }
    Input in = new Input(state);
    int n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      map.place(ObjId.valueOf(in.readLong()), GroupId.valueOf(in.readString()));
    }
    int c = in.readVarInt(true);
    for (int i = 0; i < c; i++) {
      ObjId id = ObjId.valueOf(in.readLong());
      int k = in.readVarInt(true);
      List<MsgId> chain = new ArrayList<>();
      for (int j = 0; j < k; j++) {
        if (!in.readBoolean()) {
          throw new IllegalStateException("an oracle snapshot written before issue 26 (a queued move): this version"
              + " cannot read it; partition snapshots of that version are not readable either");
        }
        chain.add(MsgId.valueOf(in.readLong(), in.readLong(), in.readVarInt(true)));
      }
      chains.restore(id, chain);
    }
    byte[] extra = in.readBytes(in.readVarInt(true));
    if (in.position() < state.length) {
      int t = in.readVarInt(true);
      TreeMap<GroupId, Boolean> entries = new TreeMap<>();
      for (int i = 0; i < t; i++) {
        entries.put(GroupId.valueOf(in.readString()), in.readBoolean());
      }
      table.restore(entries);
    } else {
      table.reset(); // a snapshot from before the partition table
    }
    app.restoreExtraState(extra.length == 0 ? null : codec.decode(extra));
  }
}
