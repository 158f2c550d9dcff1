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
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

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

  /**
   * A connection held a started frame for the idle timeout without sending another byte of it;
   * raised by {@link FrameDecoder} as an exception down the pipeline.
   */
  public static final class FrameIdleException extends CorruptedFrameException {
    private static final long serialVersionUID = 1L;

    FrameIdleException(String message) {
      super(message);
    }
  }

  /**
   * The length-prefix decoder, which can also tell whether it holds part of a frame and, given an
   * idle timeout, raises {@link FrameIdleException} when a started frame gets no byte for that
   * long while the channel is being read. Time during which the channel's auto-read is off (the
   * node holding the connection back) does not count. Event loop only.
   */
  public static final class FrameDecoder extends LengthFieldBasedFrameDecoder {
    private final long idleNanos;
    private long lastRead = System.nanoTime();
    private ScheduledFuture<?> check;

    FrameDecoder(int maxFrameBytes, long idleTimeoutMs) {
      super(maxFrameBytes, 0, 4, 0, 4);
      this.idleNanos = TimeUnit.MILLISECONDS.toNanos(idleTimeoutMs);
    }

    /** True if some bytes of a frame that is not complete yet have arrived. */
    public boolean holdsPartialFrame() {
      return actualReadableBytes() > 0;
    }

    /** Tells the decoder that reading resumed after a pause: the idle time starts again now. */
    public void readingResumed() {
      lastRead = System.nanoTime();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
      lastRead = System.nanoTime();
      super.channelRead(ctx, msg);
      if (idleNanos > 0 && check == null && holdsPartialFrame() && ctx.channel().isActive()) {
        schedule(ctx, idleNanos);
      }
    }

    private void schedule(ChannelHandlerContext ctx, long delayNanos) {
      check = ctx.executor().schedule(() -> check(ctx), delayNanos, TimeUnit.NANOSECONDS);
    }

    private void check(ChannelHandlerContext ctx) {
      check = null;
      if (!ctx.channel().isActive() || ctx.isRemoved() || !holdsPartialFrame()) {
        return; // the next read that leaves part of a frame schedules again
      }
      long now = System.nanoTime();
      if (!ctx.channel().config().isAutoRead()) {
        lastRead = now; // held back by the node, not idle by the client's doing
        schedule(ctx, idleNanos);
        return;
      }
      long idle = now - lastRead;
      if (idle < idleNanos) {
        schedule(ctx, idleNanos - idle);
        return;
      }
      ctx.fireExceptionCaught(new FrameIdleException("no byte of a started frame ("
          + actualReadableBytes() + " bytes received) for " + TimeUnit.NANOSECONDS.toMillis(idleNanos) + " ms"));
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
      cancel();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
      cancel();
      super.channelInactive(ctx);
    }

    private void cancel() {
      if (check != null) {
        check.cancel(false);
        check = null;
      }
    }
  }

  private final Codec codec;

  /**
   * Adds the framing every Eyrie connection uses (clients' and nodes' to a node's client port,
   * and the port's own) to a pipeline: a 4-byte length prefix, frames of at most {@code
   * maxFrameBytes} including it, and the Kryo objects in them.
   */
  public static ChannelPipeline addFraming(ChannelPipeline p, Codec codec, int maxFrameBytes) {
    return addFraming(p, codec, maxFrameBytes, 0);
  }

  /**
   * Adds the framing as {@link #addFraming(ChannelPipeline, Codec, int)} does, with an idle
   * timeout for a started frame ({@link FrameDecoder}); 0 for none.
   */
  public static ChannelPipeline addFraming(ChannelPipeline p, Codec codec, int maxFrameBytes, long frameIdleTimeoutMs) {
    return p.addLast("frameDecoder", new FrameDecoder(maxFrameBytes, frameIdleTimeoutMs))
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
