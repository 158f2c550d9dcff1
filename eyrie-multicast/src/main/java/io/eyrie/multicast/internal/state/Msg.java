package io.eyrie.multicast.internal.state;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.internal.Wire.Start;
import java.util.Comparator;
import java.util.Map;
import java.util.TreeMap;

/**
 * A multicast message as one group knows it: its Start, its Skeen timestamps and the proposals
 * received for it. {@link Ordering} holds it while it is pending, then {@link ExecutionQueue}
 * until it has executed.
 */
final class Msg {
  static final Comparator<Msg> BY_LOCAL_TS = (a, b) -> {
    int c = Long.compare(a.localTs, b.localTs);
    return c != 0 ? c : a.start.id().compareTo(b.start.id());
  };
  static final Comparator<Msg> BY_FINAL_TS = (a, b) -> {
    int c = Long.compare(a.finalTs, b.finalTs);
    return c != 0 ? c : a.start.id().compareTo(b.start.id());
  };

  final Start start;
  long localTs = -1;
  long finalTs = -1;
  /** Another group holds another message under this id: never executed here (review F7). */
  boolean conflict;
  final TreeMap<GroupId, Long> proposals = new TreeMap<>();

  Msg(Start start) {
    this.start = start;
  }

  void writeTo(Output out, Codec codec) {
    codec.write(out, start);
    out.writeLong(localTs);
    out.writeLong(finalTs);
    out.writeBoolean(conflict);
    out.writeVarInt(proposals.size(), true);
    for (Map.Entry<GroupId, Long> e : proposals.entrySet()) {
      out.writeString(e.getKey().name());
      out.writeVarLong(e.getValue(), true);
    }
  }

  static Msg readFrom(Input in, Codec codec) {
    Msg m = new Msg((Start) codec.read(in));
    m.localTs = in.readLong();
    m.finalTs = in.readLong();
    m.conflict = in.readBoolean();
    int k = in.readVarInt(true);
    for (int j = 0; j < k; j++) {
      m.proposals.put(GroupId.valueOf(in.readString()), in.readVarLong(true));
    }
    return m;
  }
}
