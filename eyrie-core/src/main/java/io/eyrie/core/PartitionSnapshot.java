package io.eyrie.core;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.core.internal.ObjectLocks;
import io.eyrie.core.internal.ObjectStore;
import io.eyrie.core.internal.TableChanges;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;

/**
 * Owns the encoding of a partition's snapshot, which gathers the replicated state of the parts:
 * the counts and the objects ({@link ObjectStore}), the held objects ({@link ObjectLocks}), the
 * retired partitions and the changes waiting for their table ({@link TableChanges}), the objects
 * made for creates waiting for their verdict ({@link PendingCreates}), and the blocked commands
 * ({@link ObjectLocks}), in this order. A replica reads the snapshots its predecessors wrote, so
 * the layout changes only with a way to read the old one ({@code PartitionServerSnapshotTest}
 * keeps a snapshot's bytes).
 */
record PartitionSnapshot(Codec codec, ObjectStore store, ObjectLocks locks, TableChanges tables,
    PendingCreates creates) {
  /** Returns the parts' state, encoded. */
  byte[] write() {
    Output out = new Output(4096, -1);
    for (long count : store.counts()) {
      out.writeVarLong(count, true);
    }
    out.writeVarInt(store.size(), true);
    for (PRObject o : store.values()) {
      codec.write(out, o);
    }
    SortedSet<ObjId> held = locks.held();
    out.writeVarInt(held.size(), true);
    for (ObjId id : held) {
      out.writeVarLong(id.value(), false);
    }
    out.writeVarInt(tables.retired().size(), true);
    for (GroupId g : tables.retired()) {
      out.writeString(g.name());
    }
    out.writeVarInt(tables.pending().size(), true);
    for (MsgId t : tables.pending()) {
      write(out, t);
    }
    out.writeVarInt(creates.made().size(), true);
    for (PRObject o : creates.made()) {
      codec.write(out, o);
    }
    out.writeVarInt(locks.waiting().size(), true);
    for (Map.Entry<MsgId, ObjId[]> e : locks.waiting().entrySet()) {
      write(out, e.getKey());
      out.writeVarInt(e.getValue().length, true);
      for (ObjId id : e.getValue()) {
        out.writeVarLong(id.value(), false);
      }
    }
    return out.toBytes();
  }

  /** Replaces the parts' state with a snapshot's; an empty one leaves them empty. */
  void read(byte[] state) {
    store.clear();
    locks.clear();
    creates.clear();
    tables.clear();
    if (state.length == 0) {
      return;
    }
    Input in = new Input(state);
    long executed = in.readVarLong(true);
    long multiPartition = in.readVarLong(true);
    long retries = in.readVarLong(true);
    store.restoreCounts(executed, multiPartition, retries);
    int n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      PRObject o = (PRObject) codec.read(in);
      store.put(o.getId(), o);
    }
    int h = in.readVarInt(true);
    for (int i = 0; i < h; i++) {
      locks.hold(ObjId.valueOf(in.readVarLong(false)));
    }
    List<GroupId> retired = new ArrayList<>();
    int rt = in.readVarInt(true);
    for (int i = 0; i < rt; i++) {
      retired.add(GroupId.valueOf(in.readString()));
    }
    tables.setRetired(retired);
    int tc = in.readVarInt(true);
    for (int i = 0; i < tc; i++) {
      tables.delivered(readMsgId(in));
    }
    int k = in.readVarInt(true);
    for (int i = 0; i < k; i++) {
      creates.restoreMade((PRObject) codec.read(in));
    }
    int w = in.readVarInt(true);
    for (int i = 0; i < w; i++) {
      MsgId id = readMsgId(in);
      ObjId[] ids = new ObjId[in.readVarInt(true)];
      for (int j = 0; j < ids.length; j++) {
        ids[j] = ObjId.valueOf(in.readVarLong(false));
      }
      locks.block(id, ids);
    }
  }

  private static void write(Output out, MsgId id) {
    out.writeVarLong(id.client(), false);
    out.writeVarLong(id.seq(), false);
    out.writeVarInt(id.attempt(), true);
  }

  private static MsgId readMsgId(Input in) {
    return MsgId.valueOf(in.readVarLong(false), in.readVarLong(false), in.readVarInt(true));
  }
}
