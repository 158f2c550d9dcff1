package io.eyrie.multicast.internal;

import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.GroupId;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a node hands entries to the node that leads a group ({@code NodeOptions.relay}): a
 * {@link Wire.RelayRequest} on that node's client port, answered asynchronously once the leader's
 * node has applied its own entry that carried the parts. One connection per peer node, opened on
 * first use and again after it closed.
 *
 * <p>Not through Ratis: Ratis's Netty server handles a request on its event-loop thread and
 * blocks that thread until the answer is ready, and a relayed entry waits for the leader's next
 * entry to commit, which needs the followers' servers to take appendEntries; relays waiting on
 * each other's event loops stopped a cluster within seconds when tried. The client port answers
 * when the future completes, holding no thread.
 */
final class NodeRelay implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(NodeRelay.class);

  private final int self;
  private final Supplier<ClusterConfig> cluster;
  private final long timeoutMs;
  private final EventLoopGroup group = new NioEventLoopGroup(1, new DefaultThreadFactory("eyrie-relay-io", true));
  private final Bootstrap bootstrap;
  private final Map<Integer, CompletableFuture<Channel>> channels = new ConcurrentHashMap<>();
  private final Map<Long, CompletableFuture<byte[]>> pending = new ConcurrentHashMap<>();
  private final AtomicLong ids = new AtomicLong();
  private volatile boolean closed;

  NodeRelay(int self, Supplier<ClusterConfig> cluster, Codec codec, int maxFrameBytes, long timeoutMs) {
    this.self = self;
    this.cluster = cluster;
    this.timeoutMs = timeoutMs;
    this.bootstrap = new Bootstrap().group(group).channel(NioSocketChannel.class)
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, timeoutMs))
        .handler(new ChannelInitializer<Channel>() {
          @Override
          protected void initChannel(Channel ch) {
            FrameCodec.addFraming(ch.pipeline(), codec, maxFrameBytes).addLast(new Replies());
          }
        });
  }

  /**
   * Relays an entry for group {@code g} to node {@code leader}: completes with the entry's reply,
   * or exceptionally if the node refused it (not the leader any more, closing), the connection
   * failed or no answer came within the timeout. Returns null when {@code leader} is this node or
   * unknown: the caller writes the entry itself.
   */
  CompletableFuture<byte[]> relay(int leader, GroupId g, Object entry) {
    if (closed || leader <= 0 || leader == self || cluster.get().nodes().get(leader) == null) {
      return null;
    }
    long id = ids.incrementAndGet();
    CompletableFuture<byte[]> answer = new CompletableFuture<>();
    pending.put(id, answer);
    answer.whenComplete((b, e) -> pending.remove(id));
    channel(leader).whenComplete((ch, err) -> {
      if (err != null) {
        answer.completeExceptionally(err);
        return;
      }
      ch.writeAndFlush(new Wire.RelayRequest(id, g, entry)).addListener((ChannelFutureListener) f -> {
        if (!f.isSuccess()) {
          answer.completeExceptionally(f.cause());
        }
      });
    });
    return answer.orTimeout(timeoutMs, TimeUnit.MILLISECONDS);
  }

  private CompletableFuture<Channel> channel(int node) {
    return channels.compute(node, (n, old) -> {
      if (old != null && (!old.isDone() || (!old.isCompletedExceptionally() && old.getNow(null).isActive()))) {
        return old;
      }
      CompletableFuture<Channel> f = new CompletableFuture<>();
      ClusterConfig.NodeInfo info = cluster.get().nodes().get(n);
      if (info == null) {
        f.completeExceptionally(new IllegalStateException("node " + n + " is not in the cluster"));
        return f;
      }
      try {
        bootstrap.connect(info.host(), info.clientPort()).addListener((ChannelFutureListener) c -> {
          if (c.isSuccess()) {
            f.complete(c.channel());
          } else {
            f.completeExceptionally(c.cause());
          }
        });
      } catch (RuntimeException e) {
        f.completeExceptionally(e); // closing
      }
      return f;
    });
  }

  /** Completes relays with their answers; an answer that is not OK fails the relay. */
  private final class Replies extends SimpleChannelInboundHandler<Object> {
    @Override
    protected void channelRead0(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof Wire.ClientReply r) {
        CompletableFuture<byte[]> f = pending.get(r.requestId());
        if (f != null) {
          if (r.status() == GroupState.OK) {
            f.complete(r.body() == null ? new byte[0] : r.body());
          } else {
            f.completeExceptionally(new IllegalStateException("relay refused: " + r.error()));
          }
        }
      } else {
        ctx.close();
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      // Requests on a closed connection get no answer: fail what is pending (on any connection,
      // which is harmless: the callers write those entries themselves, and a group applies a
      // start or a channel item once however often it comes).
      LOG.debug("relay connection {} closed", ctx.channel());
      pending.values().forEach(f -> f.completeExceptionally(new IllegalStateException("relay connection closed")));
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      LOG.debug("relay connection {}: {}; closing", ctx.channel(), cause.toString());
      ctx.close();
    }
  }

  @Override
  public void close() {
    closed = true;
    pending.values().forEach(f -> f.completeExceptionally(new IllegalStateException("node is closing")));
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }
}
