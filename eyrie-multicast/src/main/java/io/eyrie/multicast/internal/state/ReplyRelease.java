package io.eyrie.multicast.internal.state;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.internal.state.Inboxes.Inbox;
import java.util.HashMap;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BiConsumer;

/**
 * The replies of the messages that completed at their reply group: each is encoded and recorded
 * in the client table, then released once every other destination has sent its started-signal
 * (or an item, which says the same). Owns the replies recorded here that still wait for
 * started-signals, and their snapshot section. Part of {@link ExecutionQueue}.
 */
final class ReplyRelease {
  private final GroupId self;
  private final Codec codec;
  private final ClientTable clients;
  /** Releases a final reply (to the listener of the moment). */
  private final BiConsumer<MsgId, StoredReply> release;

  /** Replies recorded here but waiting for the other destinations' started-signals. */
  final HashMap<MsgId, TreeSet<GroupId>> awaitingStarts = new HashMap<>();

  ReplyRelease(GroupId self, Codec codec, ClientTable clients, BiConsumer<MsgId, StoredReply> release) {
    this.self = self;
    this.codec = codec;
    this.clients = clients;
    this.release = release;
  }

  boolean isAwaitingStarts(MsgId id) {
    return awaitingStarts.containsKey(id);
  }

  /** Adds the clients whose replies wait for started-signals to {@code active}. */
  void addActiveClients(Set<Long> active) {
    for (MsgId id : awaitingStarts.keySet()) {
      active.add(id.client());
    }
  }

  /**
   * Records the reply of a message that completed here, its reply group, and releases it unless
   * another destination has not been heard from yet ({@code in}, the message's items, may be null).
   */
  void record(Msg m, Execution ex, Inbox in) {
    MsgId id = m.start.id();
    StoredReply r;
    if (ex.isError()) {
      r = new StoredReply(Status.ERROR, null, ex.errorMessage());
    } else {
      byte[] body;
      try {
        body = codec.encode(ex.replyValue());
      } catch (VirtualMachineError e) {
        throw e;
      } catch (Throwable e) {
        // Unregistered, nested too deep, or an application serializer failed (see
        // ExecutionQueue.invoke).
        body = null;
      }
      r = body == null ? new StoredReply(Status.ERROR, null, "reply is not encodable: "
          + ex.replyValue().getClass().getName()) : new StoredReply(Status.OK, body, null);
    }
    clients.touch(id.client()).replies.put(id, r);
    TreeSet<GroupId> waiting = new TreeSet<>();
    // A conflicting message ran nowhere it was marked, and other versions may have other
    // destinations: no started-signal to wait for.
    for (GroupId d : m.conflict ? new GroupId[0] : m.start.dests()) {
      if (!d.equals(self) && (in == null || !in.heard.contains(d))) {
        waiting.add(d);
      }
    }
    if (waiting.isEmpty()) {
      release.accept(id, r);
    } else {
      awaitingStarts.put(id, waiting);
    }
  }

  /**
   * Takes an item or started-signal from {@code from} for a message whose reply waits for
   * started-signals, releasing the reply once none is missing; false if the message's reply does
   * not wait (the item is then the queue's).
   */
  boolean heardFrom(GroupId from, MsgId id) {
    TreeSet<GroupId> waiting = awaitingStarts.get(id);
    if (waiting == null) {
      return false;
    }
    waiting.remove(from);
    if (waiting.isEmpty()) {
      awaitingStarts.remove(id);
      StoredReply r = clients.reply(id);
      if (r != null) {
        release.accept(id, r);
      }
    }
    return true;
  }

  void describeTo(StringBuilder b) {
    int n = 0;
    for (var e : awaitingStarts.entrySet()) {
      if (n++ == 3) {
        break;
      }
      b.append("  awaiting starts ").append(e.getKey()).append(" from ").append(e.getValue()).append('\n');
    }
  }

  void writeTo(Output out) {
    out.writeVarInt(awaitingStarts.size(), true);
    for (MsgId id : new TreeSet<>(awaitingStarts.keySet())) {
      SnapshotIo.writeId(out, id);
      SnapshotIo.writeGroups(out, awaitingStarts.get(id));
    }
  }

  void readFrom(Input in) {
    int n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      awaitingStarts.put(SnapshotIo.readId(in), SnapshotIo.readGroups(in));
    }
  }
}
