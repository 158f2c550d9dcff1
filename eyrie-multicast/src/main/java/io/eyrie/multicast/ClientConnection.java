package io.eyrie.multicast;

import io.eyrie.multicast.internal.Wire;
import io.eyrie.multicast.internal.transport.FrameCodec;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.SimpleChannelInboundHandler;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link MulticastClient}'s connection to one node's client port: opened on first use and
 * again on the first use after it was lost, with the requests waiting for an answer on it.
 */
final class ClientConnection {
  private static final Logger LOG = LoggerFactory.getLogger(ClientConnection.class);
  /** How long a node that refused a connection is passed over when another node can serve. */
  private static final long DOWN_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final CallDispatcher client;
  private final ClusterConfig.NodeInfo node;
  private final Bootstrap bootstrap;
  /** Calls by the request ids they were sent under on this node. */
  final ConcurrentHashMap<Long, ClientCall> inflight = new ConcurrentHashMap<>();
  /** The current or last channel (or connection attempt). Guarded by this. */
  private CompletableFuture<Channel> channel;
  /** When a connection attempt last failed (nanoTime), 0 if the last one succeeded. */
  private volatile long downSince;

  /** The TLS configuration of the client, or null for plaintext. */
  private final TlsConfig tls;
  /** Why the node refused this client's TLS (the last such refusal), or null. */
  private volatile String tlsRefusal;

  ClientConnection(CallDispatcher client, ClusterConfig.NodeInfo node, Bootstrap bootstrap, Codec codec,
      int maxFrameBytes, TlsConfig tls) {
    this.client = client;
    this.node = node;
    this.tls = tls;
    this.bootstrap = bootstrap.handler(new ChannelInitializer<Channel>() {
      @Override
      protected void initChannel(Channel ch) {
        if (tls != null) {
          ch.pipeline().addLast("ssl", tls.clientContext().newHandler(ch.alloc(), node.host(), node.clientPort()));
        }
        FrameCodec.addFraming(ch.pipeline(), codec, maxFrameBytes).addLast(new ReplyHandler());
      }
    });
  }

  /**
   * Returns why the node refused this client's TLS, if the failure is one that trying again
   * cannot mend (a certificate the other end does not accept), else null.
   */
  static String tlsRefusal(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof io.netty.handler.ssl.SslHandshakeTimeoutException) {
        return null; // slow, not refused
      }
      if (c instanceof javax.net.ssl.SSLHandshakeException
          || c instanceof javax.net.ssl.SSLException && String.valueOf(c.getMessage()).contains("fatal alert")) {
        return TlsConfig.explain(c);
      }
    }
    return null;
  }

  /** Returns why the node refused TLS on this connection's last channel, or null. */
  String tlsRefusal() {
    return tlsRefusal;
  }

  int nodeId() {
    return node.id();
  }

  /** True if connecting to the node failed recently. */
  boolean down(long nowNanos) {
    long d = downSince;
    return d != 0 && nowNanos - d < DOWN_NANOS;
  }

  /** Returns the open channel, or a connection attempt if there is none. */
  synchronized CompletableFuture<Channel> channel() {
    if (channel != null) {
      if (!channel.isDone()) {
        return channel;
      }
      Channel ch = channel.isCompletedExceptionally() ? null : channel.getNow(null);
      if (ch != null && ch.isActive()) {
        return channel;
      }
    }
    CompletableFuture<Channel> f = new CompletableFuture<>();
    channel = f;
    ChannelFuture cf;
    try {
      cf = bootstrap.connect(node.host(), node.clientPort());
    } catch (RuntimeException e) {
      f.completeExceptionally(e); // the client is closing
      return f;
    }
    cf.addListener((ChannelFutureListener) done -> {
      if (done.isSuccess()) {
        downSince = 0;
        Channel ch = done.channel();
        tlsRefusal = null;
        // After the event loop's current task: a TLS alert that closed the channel reaches the
        // ReplyHandler (which records the refusal) only after the close.
        ch.closeFuture().addListener(x -> {
          try {
            ch.eventLoop().execute(() -> client.onConnectionLost(this, ch));
          } catch (java.util.concurrent.RejectedExecutionException e) {
            client.onConnectionLost(this, ch); // the client is closing
          }
        });
        io.netty.handler.ssl.SslHandler ssl = ch.pipeline().get(io.netty.handler.ssl.SslHandler.class);
        if (ssl == null) {
          f.complete(ch);
          return;
        }
        ssl.handshakeFuture().addListener(h -> {
          if (h.isSuccess()) {
            f.complete(ch);
          } else {
            String why = tlsRefusal(h.cause());
            if (why != null) {
              tlsRefusal = why;
            }
            f.completeExceptionally(h.cause());
          }
        });
      } else {
        long now = System.nanoTime();
        downSince = now == 0 ? 1 : now;
        f.completeExceptionally(done.cause());
      }
    });
    return f;
  }

  /** Passes replies to the client; any trouble on the channel closes it, which resends its requests. */
  private final class ReplyHandler extends SimpleChannelInboundHandler<Object> {
    @Override
    protected void channelRead0(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof Wire.ClientReply r) {
        client.onReply(ClientConnection.this, ctx.channel(), r);
      } else {
        LOG.warn("node {} sent an unexpected frame {}; closing the connection", node.id(), msg.getClass().getName());
        ctx.close();
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      String why = tls == null ? null : tlsRefusal(cause);
      if (why != null) {
        // With TLSv1.3 the server checks the client's certificate after the client finished its
        // handshake: the refusal comes as an alert on the first read.
        tlsRefusal = why;
        LOG.warn("TLS with node {} failed: {}", node.id(), why);
      } else {
        LOG.debug("connection to node {}: {}; closing", node.id(), cause.toString());
      }
      ctx.close();
    }
  }
}
