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

  ClientConnection(CallDispatcher client, ClusterConfig.NodeInfo node, Bootstrap bootstrap, Codec codec,
      int maxFrameBytes) {
    this.client = client;
    this.node = node;
    this.bootstrap = bootstrap.handler(new ChannelInitializer<Channel>() {
      @Override
      protected void initChannel(Channel ch) {
        FrameCodec.addFraming(ch.pipeline(), codec, maxFrameBytes).addLast(new ReplyHandler());
      }
    });
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
        ch.closeFuture().addListener(x -> client.onConnectionLost(this, ch));
        f.complete(ch);
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
        client.onReply(ClientConnection.this, r);
      } else {
        LOG.warn("node {} sent an unexpected frame {}; closing the connection", node.id(), msg.getClass().getName());
        ctx.close();
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      LOG.debug("connection to node {}: {}; closing", node.id(), cause.toString());
      ctx.close();
    }
  }
}
