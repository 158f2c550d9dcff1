package io.eyrie.multicast.internal;

import com.esotericsoftware.kryo.Kryo;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.Status;

/**
 * Kryo registrations of Eyrie's own types. Ids are part of the wire format and of snapshots:
 * never renumber, only append (ids 10-99 are Eyrie's, 100+ the application's).
 */
public final class WireTypes {
  private WireTypes() {}

  /** Registers Eyrie's types on a Kryo instance. */
  public static void register(Kryo k) {
    k.register(byte[].class, 10);
    k.register(Object[].class, 11);
    k.register(GroupId.class, 12);
    k.register(GroupId[].class, 13);
    k.register(MsgId.class, 14);
    k.register(Wire.Start.class, 15);
    k.register(Wire.Start[].class, 16);
    k.register(Wire.StartBatch.class, 17);
    k.register(Wire.ChannelBatch.class, 18);
    k.register(Wire.Propose.class, 19);
    k.register(Wire.Data.class, 20);
    k.register(Wire.Started.class, 21);
    k.register(Wire.ClientRequest.class, 22);
    k.register(Wire.ClientReply.class, 23);
    k.register(Wire.QueryRequest.class, 24);
    k.register(java.util.ArrayList.class, 25);
    k.register(java.util.TreeSet.class, 26);
    k.register(java.util.TreeMap.class, 27);
    k.register(java.util.HashMap.class, 28);
    k.register(long[].class, 29);
    k.register(int[].class, 30);
    k.register(String[].class, 31);
    k.register(Wire.Conflict.class, 32);
    k.register(Wire.GroupChange.class, 33);
    k.register(Wire.ViewRequest.class, 34);
    k.register(Wire.GroupQuery.class, 35);
    // 36-38 were bundled log entries, their channel batch arrays and relay requests (removed):
    // not to be reused, so that an old log or frame never decodes as something else.
    k.register(Wire.HalfwayQuery.class, 39);
    k.register(Wire.Abandoned.class, 40);
    k.register(Status.class, new StatusCodes.KryoSerializer(), 41);
  }
}
