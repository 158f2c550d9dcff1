package io.eyrie.core.internal;

import io.eyrie.core.ObjId;
import io.eyrie.core.PRObject;
import io.eyrie.core.protocol.Values;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.GroupId;
import java.util.List;
import java.util.TreeMap;

/**
 * Owns what a partition checks of its objects' encodings, and the sending of object values to
 * other partitions. An object is stored only if it encodes, its encoding decodes, and it fits in
 * one channel item, so that it can always move, be copied to another partition and be
 * snapshotted; values leave only once they are encoded, and when they cannot be, the receivers
 * are told so instead of waiting.
 */
public final class ObjectEncoding {
  /** The most an object may take encoded: what one channel item carries, less room for its framing. */
  public static final int MAX_OBJECT_BYTES = ExecutionContext.MAX_ITEM_BYTES - 4096;
  private final Codec codec;

  public ObjectEncoding(Codec codec) {
    this.codec = codec;
  }

  /**
   * Null if an object can be stored here: it encodes, its encoding decodes (a class without a
   * no-argument constructor, or a serializer that cannot read what it wrote, encodes but would be
   * lost on its first move), and it fits in one channel item (else it could never move or be
   * copied to another partition). Else why not.
   */
  public String unstorable(PRObject o) {
    byte[] b;
    try {
      b = codec.encode(o);
    } catch (IllegalArgumentException e) {
      return "object " + o.getId() + " cannot be encoded: " + e.getMessage();
    }
    if (b.length > MAX_OBJECT_BYTES) {
      return "object " + o.getId() + " takes " + b.length + " bytes encoded, more than the " + MAX_OBJECT_BYTES
          + " an object may take (it could never move)";
    }
    try {
      codec.decode(b);
    } catch (IllegalArgumentException e) {
      return "object " + o.getId() + " cannot be decoded from its encoding: " + e.getMessage();
    }
    return null;
  }

  /** Null if an object a command left can still be encoded and fits in one channel item, else why not. */
  public String leftUnencodable(ObjId id, PRObject o) {
    int size;
    try {
      size = codec.encodedSize(o);
    } catch (IllegalArgumentException e) {
      return "the command left object " + id + " that cannot be encoded: " + e.getMessage();
    }
    if (size > MAX_OBJECT_BYTES) {
      return "the command left object " + id + " taking " + size + " bytes encoded, more than the "
          + MAX_OBJECT_BYTES + " an object may take";
    }
    return null;
  }

  /**
   * Sends the values of objects to other partitions. They are encoded once, at once (the
   * receivers get copies, whatever this partition does to its objects later), and the context
   * decodes the encoding once before it leaves ({@link ExecutionContext#sendEncoded}): if either
   * fails, the receivers are told so, so that they answer an error instead of waiting, and every
   * partition of the command fails it alike.
   *
   * @return null, or why the values could not be sent
   */
  public String ship(ExecutionContext ctx, List<GroupId> to, TreeMap<ObjId, PRObject> values) {
    if (to.isEmpty()) {
      return null;
    }
    String why = null;
    try {
      byte[] encoded = codec.encode(Values.of(values));
      for (GroupId g : to) {
        ctx.sendEncoded(g, encoded);
      }
      return null;
    } catch (VirtualMachineError e) {
      throw e;
    } catch (Throwable e) {
      // Whatever failed, the receivers must hear it (they wait for these values), and so must the
      // sender's caller.
      why = "the objects " + values.keySet() + " cannot be shipped: " + e.getMessage();
    }
    for (GroupId g : to) {
      ctx.send(g, Values.failed(why.length() <= 1000 ? why : why.substring(0, 1000)));
    }
    return why;
  }
}
