package io.eyrie.multicast.internal.transport;

import io.eyrie.multicast.Codec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.handler.codec.MessageToMessageCodec;
import java.util.List;

/**
 * Converts between one frame's bytes (the length prefix already removed) and the Kryo object
 * they hold, for both ends of a client connection.
 *
 * <p>A frame that cannot be decoded raises a {@link MalformedFrameException}, which travels down
 * the pipeline as an exception; the handler behind this one decides what to answer. A frame that
 * holds a Kryo {@code null} is passed on as {@link #NULL_FRAME}, because Netty's message lists
 * cannot carry null and a null is well-formed (just unexpected).
 */
public final class FrameCodec extends MessageToMessageCodec<ByteBuf, Object> {

  /** Stands for a frame that decoded to null. */
  public static final Object NULL_FRAME = new Object() {
    @Override
    public String toString() {
      return "null";
    }
  };

  /** A frame whose bytes are not a registered Kryo object. */
  public static final class MalformedFrameException extends CorruptedFrameException {
    private static final long serialVersionUID = 1L;

    MalformedFrameException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  private final Codec codec;

  /**
   * Adds the framing every Eyrie connection uses (clients' and nodes' to a node's client port,
   * and the port's own) to a pipeline: a 4-byte length prefix, frames of at most {@code
   * maxFrameBytes} including it, and the Kryo objects in them.
   */
  public static ChannelPipeline addFraming(ChannelPipeline p, Codec codec, int maxFrameBytes) {
    return p.addLast("frameDecoder", new LengthFieldBasedFrameDecoder(maxFrameBytes, 0, 4, 0, 4))
        .addLast("framePrepender", new LengthFieldPrepender(4))
        .addLast("frameCodec", new FrameCodec(codec));
  }

  /**
   * Creates a frame codec.
   *
   * @param codec the codec for the frames' objects
   */
  public FrameCodec(Codec codec) {
    this.codec = codec;
  }

  @Override
  public boolean acceptOutboundMessage(Object msg) {
    // Raw buffers are already frames' bodies (tests write them); let them pass untouched.
    return !(msg instanceof ByteBuf);
  }

  @Override
  protected void encode(ChannelHandlerContext ctx, Object msg, List<Object> out) {
    out.add(Unpooled.wrappedBuffer(codec.encode(msg)));
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf frame, List<Object> out) {
    int len = frame.readableBytes();
    Object decoded;
    try {
      if (frame.hasArray()) {
        decoded = codec.decode(frame.array(), frame.arrayOffset() + frame.readerIndex(), len);
      } else {
        byte[] copy = new byte[len];
        frame.getBytes(frame.readerIndex(), copy);
        decoded = codec.decode(copy, 0, len);
      }
    } catch (IllegalArgumentException e) {
      throw new MalformedFrameException("malformed frame: " + e.getMessage(), e);
    }
    out.add(decoded == null ? NULL_FRAME : decoded);
  }
}
