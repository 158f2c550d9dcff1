package io.eyrie.multicast.internal.transport;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.ssl.SslHandler;
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
  private final FrameCodec.IdleTimer idle;

  IdleBoundedSslHandler(SSLEngine engine, long idleTimeoutMs) {
    super(engine);
    // Part of a record counts only after the handshake, which its own timeout bounds.
    this.idle = new FrameCodec.IdleTimer(idleTimeoutMs, "TLS record",
        () -> handshakeFuture().isSuccess() ? actualReadableBytes() : 0);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
    idle.onRead(ctx, () -> super.channelRead(ctx, msg));
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    idle.cancel();
    super.channelInactive(ctx);
  }

  @Override
  public void handlerRemoved0(ChannelHandlerContext ctx) throws Exception {
    idle.cancel();
    super.handlerRemoved0(ctx);
  }
}
