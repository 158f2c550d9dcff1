package io.eyrie.multicast.internal.transport;

import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Identity;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.internal.Wire;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.ssl.SslHandshakeTimeoutException;
import io.netty.util.AttributeKey;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A TLS connection's gate: sits right behind the {@link SslHandler}: records the peer's identity when the handshake
 * succeeds, and answers, counts and logs a failed one. A connection refused at accept
 * ({@link ConnectionAdmission}) is answered here, after its handshake, so that the client can read why.
 */
final class TlsGate extends ChannelInboundHandlerAdapter {
  private static final Logger LOG = LoggerFactory.getLogger(ClientEndpoint.class);

  /** The identity of a TLS connection's peer, set once its handshake succeeded. */
  static final AttributeKey<Identity> PEER = AttributeKey.valueOf(ClientEndpoint.class, "peer");

  private final Codec codec;
  private final EndpointCounters counters;

  TlsGate(Codec codec, EndpointCounters counters) {
    this.codec = codec;
    this.counters = counters;
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof SslHandshakeCompletionEvent e) {
      if (e.isSuccess()) {
        handshaken(ctx);
      } else {
        failed(ctx, e.cause());
      }
    }
    ctx.fireUserEventTriggered(evt);
  }

  private void handshaken(ChannelHandlerContext ctx) {
    Channel ch = ctx.channel();
    String refusal = ch.attr(ConnectionAdmission.REFUSAL).get();
    if (refusal != null) {
      ch.writeAndFlush(new Wire.ClientReply(-1, Status.UNAVAILABLE, null, refusal, 0))
          .addListener(ChannelFutureListener.CLOSE);
      return;
    }
    SslHandler ssl = ctx.pipeline().get(SslHandler.class);
    try {
      ch.attr(PEER).set(Identity.ofPeer(ssl.engine().getSession()));
    } catch (IllegalArgumentException | SSLException e) {
      counters.handshakeFailures.incrementAndGet();
      counters.warnings.warn("tls handshake", "{}: refused, its certificate names no identity: {}",
          ch.remoteAddress(), e.getMessage());
      ch.config().setAutoRead(false);
      ch.writeAndFlush(new Wire.ClientReply(-1, Status.FORBIDDEN, null,
          "forbidden: the certificate names no identity: " + e.getMessage(), 0))
          .addListener(ChannelFutureListener.CLOSE);
    }
  }

  private void failed(ChannelHandlerContext ctx, Throwable cause) {
    Channel ch = ctx.channel();
    if (cause instanceof SslHandshakeTimeoutException) {
      counters.handshakeTimeouts.incrementAndGet();
      counters.warnings.warn("tls handshake timeout", "{}: closed, the TLS handshake did not finish: {}",
          ch.remoteAddress(), cause.getMessage());
      return;
    }
    counters.handshakeFailures.incrementAndGet();
    String why = Tls.explain(cause);
    counters.warnings.warn("tls handshake", "{}: TLS handshake failed: {}", ch.remoteAddress(), why);
    if (isPlaintext(cause) && ch.isActive()) {
      // A plaintext client reads plaintext frames: tell it, written below the SslHandler, which
      // closes the connection right after this event.
      ctx.pipeline().context(SslHandler.class).writeAndFlush(ConnectionAdmission.frame(codec,
          new Wire.ClientReply(-1, Status.FORBIDDEN, null,
              "plaintext refused: this node's client port requires mutual TLS (connect with a TlsConfig:"
                  + " a certificate signed by the cluster's CA)", 0)));
    }
  }

  private static boolean isPlaintext(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof NotSslRecordException) {
        return true;
      }
    }
    return false;
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (isTls(cause)) {
      // The handshake's failure was answered above (or the TLS session broke): nothing a
      // frame handler could add.
      LOG.debug("{}: closing after {}", ctx.channel().remoteAddress(), cause.toString());
      ctx.close();
      return;
    }
    ctx.fireExceptionCaught(cause);
  }

  private static boolean isTls(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof SSLException) {
        return true;
      }
    }
    return false;
  }
}
