package io.eyrie.multicast.internal.state;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * The items other destinations sent for the messages that have not finished executing at one
 * group, buffered per message until the application reads them (see {@link ExecutionCtx}), and
 * which destinations were heard from (a Data item or a started-signal). Part of {@link
 * ExecutionQueue}, which drops a message's inbox when the message completes; the snapshot section
 * is written here.
 */
final class Inboxes {
  /** The items received for one message, and which destinations were heard from. */
  static final class Inbox {
    final TreeSet<GroupId> heard = new TreeSet<>();
    /** The encoded items, per sender (decoded when the application reads them); null for Abandoned. */
    final TreeMap<GroupId, List<byte[]>> data = new TreeMap<>();
  }

  private final HashMap<MsgId, Inbox> byId = new HashMap<>();

  /** The inbox of a message, or null. */
  Inbox get(MsgId id) {
    return byId.get(id);
  }

  /** Removes and returns the inbox of a message, or null. */
  Inbox remove(MsgId id) {
    return byId.remove(id);
  }

  boolean isEmpty() {
    return byId.isEmpty();
  }

  int size() {
    return byId.size();
  }

  /** The messages with an inbox. */
  Set<MsgId> ids() {
    return byId.keySet();
  }

  /** Records that {@code from} was heard from for a message, with an item if {@code isData}. */
  void add(GroupId from, MsgId id, byte[] value, boolean isData) {
    Inbox in = byId.computeIfAbsent(id, k -> new Inbox());
    in.heard.add(from);
    if (isData) {
      in.data.computeIfAbsent(from, k -> new ArrayList<>()).add(value);
    }
  }

  /** Adds an item without value from {@code from}: it ended the message without executing it. */
  void addAbandoned(GroupId from, MsgId id) {
    Inbox in = byId.computeIfAbsent(id, k -> new Inbox());
    in.data.computeIfAbsent(from, k -> new ArrayList<>()).add(null);
  }

  /** True if an item from each of {@code from} is here for a message. */
  boolean satisfied(MsgId id, Set<GroupId> from) {
    Inbox in = byId.get(id);
    if (in == null) {
      return false;
    }
    for (GroupId g : from) {
      List<byte[]> items = in.data.get(g);
      if (items == null || items.isEmpty()) {
        return false;
      }
    }
    return true;
  }

  /** Drops the inboxes of a client's messages below its watermark, except those still in progress. */
  void dropBelow(long client, long watermark, Predicate<MsgId> inProgress) {
    byId.keySet().removeIf(id -> id.client() == client && id.seq() < watermark && !inProgress.test(id));
  }

  void writeTo(Output out) {
    out.writeVarInt(byId.size(), true);
    for (MsgId id : new TreeSet<>(byId.keySet())) {
      Inbox in = byId.get(id);
      SnapshotIo.writeId(out, id);
      SnapshotIo.writeGroups(out, in.heard);
      out.writeVarInt(in.data.size(), true);
      for (Map.Entry<GroupId, List<byte[]>> e : in.data.entrySet()) {
        out.writeString(e.getKey().name());
        out.writeVarInt(e.getValue().size(), true);
        for (byte[] b : e.getValue()) {
          SnapshotIo.writeBytes(out, b);
        }
      }
    }
  }

  void readFrom(Input in) {
    int n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      MsgId id = SnapshotIo.readId(in);
      Inbox box = new Inbox();
      box.heard.addAll(SnapshotIo.readGroups(in));
      int k = in.readVarInt(true);
      for (int j = 0; j < k; j++) {
        GroupId g = GroupId.valueOf(in.readString());
        int c = in.readVarInt(true);
        List<byte[]> items = new ArrayList<>(c);
        for (int x = 0; x < c; x++) {
          items.add(SnapshotIo.readBytes(in));
        }
        box.data.put(g, items);
      }
      byId.put(id, box);
    }
  }
}
