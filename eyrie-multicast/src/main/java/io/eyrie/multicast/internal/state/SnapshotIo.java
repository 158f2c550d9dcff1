package io.eyrie.multicast.internal.state;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import java.util.Set;
import java.util.TreeSet;

/** The small encodings the snapshot sections of {@link GroupState}'s parts share. */
final class SnapshotIo {
  private SnapshotIo() {}

  static void writeId(Output out, MsgId id) {
    out.writeLong(id.client());
    out.writeVarLong(id.seq(), true);
    out.writeVarInt(id.attempt(), true);
  }

  static MsgId readId(Input in) {
    return MsgId.valueOf(in.readLong(), in.readVarLong(true), in.readVarInt(true));
  }

  /** Writes a set of groups in order; {@code null} (which some fields use for "none") is kept. */
  static void writeGroups(Output out, Set<GroupId> groups) {
    if (groups == null) {
      out.writeVarInt(0, true);
      return;
    }
    out.writeVarInt(groups.size() + 1, true);
    for (GroupId g : new TreeSet<>(groups)) {
      out.writeString(g.name());
    }
  }

  static TreeSet<GroupId> readGroups(Input in) {
    int n = in.readVarInt(true);
    if (n == 0) {
      return null;
    }
    TreeSet<GroupId> out = new TreeSet<>();
    for (int i = 0; i < n - 1; i++) {
      out.add(GroupId.valueOf(in.readString()));
    }
    return out;
  }

  /** Writes bytes that may be {@code null}. */
  static void writeBytes(Output out, byte[] b) {
    if (b == null) {
      out.writeVarInt(0, true);
    } else {
      out.writeVarInt(b.length + 1, true);
      out.writeBytes(b);
    }
  }

  static byte[] readBytes(Input in) {
    int n = in.readVarInt(true);
    return n == 0 ? null : in.readBytes(n - 1);
  }
}
