package io.eyrie.multicast.internal.transport;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.ssl.SslHandler;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLEngine;

/**
 * The client port's {@link SslHandler}, which also bounds how long it may hold part of a TLS
 * record after the handshake: the frame decoder behind it sees no byte of a record until the
 * whole record has arrived, so without this a client could hold a connection for ever with a
 * few bytes of one. A record that gets no byte for the frame idle timeout while the channel is
 * read raises a {@link FrameCodec.FrameIdleException} down the pipeline, which the endpoint
 * answers and counts as it does a half-sent frame. Time during which the channel's auto-read is
 * off (the node holding the connection back) does not count. The handshake itself is bounded
 * by the handshake timeout. Event loop only.
 */
final class IdleBoundedSslHandler extends SslHandler {
  private final long idleNanos;
  private long lastRead = System.nanoTime();
  private ScheduledFuture<?> check;

  IdleBoundedSslHandler(SSLEngine engine, long idleTimeoutMs) {
    super(engine);
    this.idleNanos = TimeUnit.MILLISECONDS.toNanos(idleTimeoutMs);
  }

  /** True if some bytes of a TLS record that is not complete yet have arrived. */
  boolean holdsPartialRecord() {
    return actualReadableBytes() > 0;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
    lastRead = System.nanoTime();
    super.channelRead(ctx, msg);
    if (idleNanos > 0 && check == null && handshakeFuture().isSuccess() && holdsPartialRecord()
        && ctx.channel().isActive()) {
      schedule(ctx, idleNanos);
    }
  }

  private void schedule(ChannelHandlerContext ctx, long delayNanos) {
    check = ctx.executor().schedule(() -> check(ctx), delayNanos, TimeUnit.NANOSECONDS);
  }

  private void check(ChannelHandlerContext ctx) {
    check = null;
    if (!ctx.channel().isActive() || ctx.isRemoved() || !holdsPartialRecord()) {
      return; // the next read that leaves part of a record schedules again
    }
    long now = System.nanoTime();
    if (!ctx.channel().config().isAutoRead()) {
      lastRead = now;
      schedule(ctx, idleNanos);
      return;
    }
    long idle = now - lastRead;
    if (idle < idleNanos) {
      schedule(ctx, idleNanos - idle);
      return;
    }
    ctx.fireExceptionCaught(new FrameCodec.FrameIdleException("no byte of a started TLS record ("
        + actualReadableBytes() + " bytes received) for " + TimeUnit.NANOSECONDS.toMillis(idleNanos) + " ms"));
  }

  @Override
  public void handlerRemoved0(ChannelHandlerContext ctx) throws Exception {
    cancel();
    super.handlerRemoved0(ctx);
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
