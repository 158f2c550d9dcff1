package io.eyrie.multicast.internal;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.GroupState.Channel;
import io.eyrie.multicast.internal.GroupState.ClientRecord;
import io.eyrie.multicast.internal.GroupState.Inbox;
import io.eyrie.multicast.internal.GroupState.Msg;
import io.eyrie.multicast.internal.GroupState.Reply;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Writes and reads the whole replicated state of a group: clocks, pending and delivered
 * messages, the execution queue with its parked head and buffered items, replies awaiting
 * started-signals, channel outboxes and positions, client records, counters and the
 * application's state. Maps are written in key order, so equal states give equal bytes.
 */
public final class GroupStateSnapshot {
  /**
   * 2: client records carry their highest pending seq and tombstones their highest seq (review
   * F3); a channel's Data items carry their value encoded (review F6); a message can be marked
   * conflicting (review F7). Version 1 snapshots are refused.
   */
  private static final int VERSION = 2;

  private GroupStateSnapshot() {}

  /** Writes the state. */
  public static void write(GroupState s, Output out) {
    out.writeInt(VERSION);
    out.writeString(s.self.name());
    out.writeVarLong(s.clock, true);
    out.writeVarLong(s.logTime, true);
    out.writeVarLong(s.nextSweep, true);

    out.writeVarInt(s.pending.size(), true);
    for (MsgId id : new TreeSet<>(s.pending.keySet())) {
      writeMsg(s, out, s.pending.get(id));
    }
    out.writeVarInt(s.queue.size(), true);
    for (Msg m : s.queue) {
      writeMsg(s, out, m);
    }
    out.writeBoolean(s.headStarted);
    writeGroups(out, s.parkedOn);

    out.writeVarInt(s.inboxes.size(), true);
    for (MsgId id : new TreeSet<>(s.inboxes.keySet())) {
      Inbox in = s.inboxes.get(id);
      writeId(out, id);
      writeGroups(out, in.heard);
      out.writeVarInt(in.data.size(), true);
      for (Map.Entry<GroupId, List<byte[]>> e : in.data.entrySet()) {
        out.writeString(e.getKey().name());
        out.writeVarInt(e.getValue().size(), true);
        for (byte[] b : e.getValue()) {
          writeBytes(out, b);
        }
      }
    }
    out.writeVarInt(s.awaitingStarts.size(), true);
    for (MsgId id : new TreeSet<>(s.awaitingStarts.keySet())) {
      writeId(out, id);
      writeGroups(out, s.awaitingStarts.get(id));
    }

    out.writeVarInt(s.channels.size(), true);
    for (Map.Entry<GroupId, Channel> e : s.channels.entrySet()) {
      Channel c = e.getValue();
      out.writeString(e.getKey().name());
      out.writeVarLong(c.nextIn, true);
      out.writeVarLong(c.outbox.first(), true);
      List<Object> items = c.outbox.range(c.outbox.first(), Integer.MAX_VALUE);
      out.writeVarInt(items.size(), true);
      for (Object o : items) {
        s.codec.write(out, o);
      }
    }

    out.writeVarInt(s.clients.size(), true);
    for (Long cid : new TreeSet<>(s.clients.keySet())) {
      ClientRecord r = s.clients.get(cid);
      out.writeLong(cid);
      out.writeVarLong(r.watermark, true);
      out.writeVarLong(r.lastSeen, true);
      out.writeLong(r.maxPending);
      out.writeVarInt(r.delivered.size(), true);
      for (MsgId id : new TreeSet<>(r.delivered)) {
        writeId(out, id);
      }
      out.writeVarInt(r.replies.size(), true);
      for (MsgId id : new TreeSet<>(r.replies.keySet())) {
        Reply rep = r.replies.get(id);
        writeId(out, id);
        out.writeVarInt(rep.status(), true);
        writeBytes(out, rep.body());
        out.writeString(rep.error());
      }
    }

    out.writeVarInt(s.tombstones.size(), true);
    for (Long cid : new TreeSet<>(s.tombstones.keySet())) {
      out.writeLong(cid);
      out.writeVarLong(s.tombstones.get(cid).since(), true);
      out.writeLong(s.tombstones.get(cid).maxSeq());
    }

    GroupState.Stats st = s.stats;
    for (long v : new long[] {st.entries, st.delivered, st.deliveredMulti, st.executed, st.parks, st.duplicates,
        st.itemsSent, st.itemsReceived}) {
      out.writeVarLong(v, true);
    }
    writeBytes(out, s.app.snapshot());
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
    s.clock = in.readVarLong(true);
    s.logTime = in.readVarLong(true);
    s.nextSweep = in.readVarLong(true);

    int n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      Msg m = readMsg(s, in);
      s.pending.put(m.start.id(), m);
      if (m.finalTs >= 0) {
        s.decided.add(m);
      } else {
        s.undecided.add(m);
      }
    }
    n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      Msg m = readMsg(s, in);
      s.queue.add(m);
      s.queued.put(m.start.id(), m);
    }
    s.headStarted = in.readBoolean();
    s.parkedOn = readGroups(in);

    n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      MsgId id = readId(in);
      Inbox box = new Inbox();
      box.heard.addAll(readGroups(in));
      int k = in.readVarInt(true);
      for (int j = 0; j < k; j++) {
        GroupId g = GroupId.valueOf(in.readString());
        int c = in.readVarInt(true);
        List<byte[]> items = new ArrayList<>(c);
        for (int x = 0; x < c; x++) {
          items.add(readBytes(in));
        }
        box.data.put(g, items);
      }
      s.inboxes.put(id, box);
    }
    n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      MsgId id = readId(in);
      s.awaitingStarts.put(id, readGroups(in));
    }

    n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      GroupId g = GroupId.valueOf(in.readString());
      Channel c = s.channels.get(g);
      if (c == null) {
        throw new IllegalStateException("snapshot has a channel to unknown group " + g);
      }
      c.nextIn = in.readVarLong(true);
      c.outbox = new SeqQueue(in.readVarLong(true));
      int k = in.readVarInt(true);
      for (int j = 0; j < k; j++) {
        c.outbox.append(s.codec.read(in));
      }
    }

    n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      long cid = in.readLong();
      ClientRecord r = new ClientRecord();
      r.watermark = in.readVarLong(true);
      r.lastSeen = in.readVarLong(true);
      r.maxPending = in.readLong();
      int k = in.readVarInt(true);
      for (int j = 0; j < k; j++) {
        r.delivered.add(readId(in));
      }
      k = in.readVarInt(true);
      for (int j = 0; j < k; j++) {
        MsgId id = readId(in);
        int status = in.readVarInt(true);
        byte[] body = readBytes(in);
        r.replies.put(id, new Reply(status, body, in.readString()));
      }
      s.clients.put(cid, r);
    }

    n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      long cid = in.readLong();
      long since = in.readVarLong(true);
      s.tombstones.put(cid, new GroupState.Tombstone(since, in.readLong()));
    }

    GroupState.Stats st = s.stats;
    st.entries = in.readVarLong(true);
    st.delivered = in.readVarLong(true);
    st.deliveredMulti = in.readVarLong(true);
    st.executed = in.readVarLong(true);
    st.parks = in.readVarLong(true);
    st.duplicates = in.readVarLong(true);
    st.itemsSent = in.readVarLong(true);
    st.itemsReceived = in.readVarLong(true);
    byte[] app = readBytes(in);
    s.app.restore(app == null ? new byte[0] : app);
  }

  private static void writeMsg(GroupState s, Output out, Msg m) {
    s.codec.write(out, m.start);
    out.writeLong(m.localTs);
    out.writeLong(m.finalTs);
    out.writeBoolean(m.conflict);
    out.writeVarInt(m.proposals.size(), true);
    for (Map.Entry<GroupId, Long> e : m.proposals.entrySet()) {
      out.writeString(e.getKey().name());
      out.writeVarLong(e.getValue(), true);
    }
  }

  private static Msg readMsg(GroupState s, Input in) {
    Msg m = new Msg((Wire.Start) s.codec.read(in));
    m.localTs = in.readLong();
    m.finalTs = in.readLong();
    m.conflict = in.readBoolean();
    int k = in.readVarInt(true);
    for (int j = 0; j < k; j++) {
      m.proposals.put(GroupId.valueOf(in.readString()), in.readVarLong(true));
    }
    return m;
  }

  private static void writeId(Output out, MsgId id) {
    out.writeLong(id.client());
    out.writeVarLong(id.seq(), true);
    out.writeVarInt(id.attempt(), true);
  }

  private static MsgId readId(Input in) {
    return MsgId.valueOf(in.readLong(), in.readVarLong(true), in.readVarInt(true));
  }

  private static void writeGroups(Output out, java.util.Set<GroupId> groups) {
    if (groups == null) {
      out.writeVarInt(0, true);
      return;
    }
    out.writeVarInt(groups.size() + 1, true);
    for (GroupId g : new TreeSet<>(groups)) {
      out.writeString(g.name());
    }
  }

  private static TreeSet<GroupId> readGroups(Input in) {
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

  private static void writeBytes(Output out, byte[] b) {
    if (b == null) {
      out.writeVarInt(0, true);
    } else {
      out.writeVarInt(b.length + 1, true);
      out.writeBytes(b);
    }
  }

  private static byte[] readBytes(Input in) {
    int n = in.readVarInt(true);
    return n == 0 ? null : in.readBytes(n - 1);
  }
}
