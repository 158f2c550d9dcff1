package io.eyrie.multicast.internal;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.Status;

/**
 * Kryo registrations of Eyrie's own types. Ids are part of the wire format and of snapshots:
 * never renumber, only append (ids 10-99 are Eyrie's, 100+ the application's).
 *
 * <p>{@link Status} has no id of its own: it travels only inside a {@link Wire.ClientReply},
 * whose serializer writes it as its {@link StatusCodes code}.
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
    k.register(Wire.Decided.class, 21);
    k.register(Wire.ClientRequest.class, 22);
    k.register(Wire.ClientReply.class, new ClientReplySerializer(), 23);
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
    // 10-39 are full; eyrie-multicast's later classes take ids from 90 (40-89 are the other
    // modules', CodecRegistry.Builder.registerEyrie). Abandoned once had 40, which eyrie-core's ObjId
    // also had: Kryo kept the later one, and Abandoned could not be sent in a DS-SMR cluster.
    k.register(Wire.Abandoned.class, 90);
    k.register(Wire.Decision.class, 91);
    k.register(Wire.Decision[].class, 92);
    k.register(Wire.Forward.class, 93);
    k.register(Wire.Forward[].class, 94);
    k.register(Wire.Component.class, 95);
    k.register(Wire.Component[].class, 96);
    k.register(Wire.Components.class, 97);
    k.register(Wire.StartedQuery.class, 98);
    k.register(MsgId[].class, 99);
  }

  /**
   * Writes a client reply as Kryo's record serializer wrote it when its status was an int (the
   * components in the same order and encodings, the status as its code), so the frames keep their
   * bytes. An unknown code fails the read, which makes the frame malformed; the body goes through
   * the registered, bounded {@code byte[]} serializer.
   */
  private static final class ClientReplySerializer extends Serializer<Wire.ClientReply> {
    ClientReplySerializer() {
      setImmutable(true);
    }

    @Override
    public void write(Kryo kryo, Output out, Wire.ClientReply r) {
      kryo.writeObjectOrNull(out, r.body(), byte[].class);
      kryo.writeObjectOrNull(out, r.error(), String.class);
      out.writeVarInt(r.leaderHint(), false);
      out.writeVarLong(r.requestId(), false);
      out.writeVarInt(StatusCodes.code(r.status()), false);
    }

    @Override
    public Wire.ClientReply read(Kryo kryo, Input in, Class<? extends Wire.ClientReply> type) {
      byte[] body = kryo.readObjectOrNull(in, byte[].class);
      String error = kryo.readObjectOrNull(in, String.class);
      int leaderHint = in.readVarInt(false);
      long requestId = in.readVarLong(false);
      int code = in.readVarInt(false);
      Status status;
      try {
        status = StatusCodes.status(code);
      } catch (IllegalArgumentException e) {
        throw new KryoException(e.getMessage());
      }
      return new Wire.ClientReply(requestId, status, body, error, leaderHint);
    }
  }
}
