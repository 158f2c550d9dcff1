package io.eyrie.multicast.internal.state;

import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.Status;
import java.util.function.BiConsumer;

/**
 * The replies of the messages that completed at their reply group: each is encoded, recorded in
 * the client table and handed to the listener. A multi-group reply goes to a client only through
 * a per-replica gate outside the replicated state, once every other destination has started the
 * message (design 4.3.1, rule 11): nothing here waits. Part of {@link ExecutionQueue}.
 */
final class ReplyRelease {
  private final Codec codec;
  private final ClientTable clients;
  /** Releases a final reply (to the listener of the moment). */
  private final BiConsumer<MsgId, StoredReply> release;

  ReplyRelease(Codec codec, ClientTable clients, BiConsumer<MsgId, StoredReply> release) {
    this.codec = codec;
    this.clients = clients;
    this.release = release;
  }

  /** Records the reply of a message that completed here, its reply group, and hands it on. */
  void record(Msg m, Execution ex) {
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
    release.accept(id, r);
  }
}
