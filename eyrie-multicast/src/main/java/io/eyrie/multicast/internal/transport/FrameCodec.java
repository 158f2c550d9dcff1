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
import java.util.function.IntSupplier;

/**
 * Converts between one frame's bytes (the length prefix already removed) and the Kryo object
 * they hold, for both ends of a client connection. A frame may carry its version before the
 * object ({@link FrameVersion}); one of a version this build does not read raises
 * {@link FrameVersion.UnsupportedFrameVersionException}, a {@link MalformedFrameException}.
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

  /**
   * A frame whose bytes are not a registered Kryo object, or are of a frame version this build
   * does not read ({@link FrameVersion.UnsupportedFrameVersionException}).
   */
  public static class MalformedFrameException extends CorruptedFrameException {
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
    private final IdleTimer idle;

    FrameDecoder(int maxFrameBytes, long idleTimeoutMs) {
      super(maxFrameBytes, 0, 4, 0, 4);
      this.idle = new IdleTimer(idleTimeoutMs, "frame", this::actualReadableBytes);
    }

    /** True if some bytes of a frame that is not complete yet have arrived. */
    public boolean holdsPartialFrame() {
      return actualReadableBytes() > 0;
    }

    /** Tells the decoder that reading resumed after a pause: the idle time starts again now. */
    public void readingResumed() {
      idle.read();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
      idle.onRead(ctx, () -> super.channelRead(ctx, msg));
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
      idle.cancel();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
      idle.cancel();
      super.channelInactive(ctx);
    }
  }

  /**
   * The idle timeout of a handler that can hold part of a unit (a frame for {@link FrameDecoder},
   * a TLS record for {@link IdleBoundedSslHandler}): when a started unit gets no byte for the
   * timeout while the channel is being read, it raises {@link FrameIdleException} down the
   * pipeline. Time during which the channel's auto-read is off (the node holding the connection
   * back) does not count. Event loop only.
   */
  static final class IdleTimer {
    private final long idleNanos;
    private final String unit;
    private final IntSupplier partialBytes;
    private long lastRead = System.nanoTime();
    private ScheduledFuture<?> check;

    /**
     * A timer.
     *
     * @param idleTimeoutMs the timeout; 0 for none
     * @param unit what the handler holds part of, for the message
     * @param partialBytes how many bytes of a started unit the handler holds (0: none, or none
     *     that counts)
     */
    IdleTimer(long idleTimeoutMs, String unit, IntSupplier partialBytes) {
      this.idleNanos = TimeUnit.MILLISECONDS.toNanos(idleTimeoutMs);
      this.unit = unit;
      this.partialBytes = partialBytes;
    }

    /** Reading resumed after a pause: the idle time starts again now. */
    void read() {
      lastRead = System.nanoTime();
    }

    /** What a handler does with a read: decodes it. */
    interface Decode {
      void run() throws Exception;
    }

    /**
     * A read: the idle time starts again, the handler decodes it, and the timer starts if part of a
     * unit is left.
     */
    void onRead(ChannelHandlerContext ctx, Decode decode) throws Exception {
      read();
      decode.run();
      if (idleNanos > 0 && check == null && partialBytes.getAsInt() > 0 && ctx.channel().isActive()) {
        schedule(ctx, idleNanos);
      }
    }

    private void schedule(ChannelHandlerContext ctx, long delayNanos) {
      check = ctx.executor().schedule(() -> check(ctx), delayNanos, TimeUnit.NANOSECONDS);
    }

    private void check(ChannelHandlerContext ctx) {
      check = null;
      int held = partialBytes.getAsInt();
      if (!ctx.channel().isActive() || ctx.isRemoved() || held == 0) {
        return; // the next read that leaves part of a unit schedules again
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
      ctx.fireExceptionCaught(new FrameIdleException("no byte of a started " + unit + " (" + held
          + " bytes received) for " + TimeUnit.NANOSECONDS.toMillis(idleNanos) + " ms"));
    }

    /** Stops the timer (the handler is removed or the channel closed). */
    void cancel() {
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
    byte[] b;
    int off;
    if (frame.hasArray()) {
      b = frame.array();
      off = frame.arrayOffset() + frame.readerIndex();
    } else {
      b = new byte[len];
      frame.getBytes(frame.readerIndex(), b);
      off = 0;
    }
    int start = FrameVersion.bodyStart(b, off, len);
    try {
      decoded = codec.decode(b, start, len - (start - off));
    } catch (IllegalArgumentException e) {
      throw new MalformedFrameException("malformed frame: " + e.getMessage(), e);
    }
    out.add(decoded == null ? NULL_FRAME : decoded);
  }
}
