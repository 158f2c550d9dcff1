package io.eyrie.multicast.internal.transport;

import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.internal.Wire;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.EncoderException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's client port: a Netty server that reads length-prefixed Kryo frames, hands
 * {@link Wire.ClientRequest}s and {@link Wire.QueryRequest}s to a {@link RequestHandler} and
 * writes each answer back with the request's id.
 *
 * <p>A connection whose framing cannot be trusted any more (a frame that does not decode or is
 * longer than the limit) gets one {@link Status#BAD_REQUEST} reply with request id -1 and is
 * closed; a well-formed frame of the wrong type gets the same reply but the connection stays
 * open. Nothing one connection does affects the others.
 */
public final class ClientEndpoint implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ClientEndpoint.class);

  private final EventLoopGroup boss;
  private final EventLoopGroup workers;
  private final Channel server;
  private final int port;
  private final AtomicBoolean closed = new AtomicBoolean();

  private ClientEndpoint(EventLoopGroup boss, EventLoopGroup workers, Channel server) {
    this.boss = boss;
    this.workers = workers;
    this.server = server;
    this.port = ((InetSocketAddress) server.localAddress()).getPort();
  }

  /**
   * Binds the endpoint and starts serving.
   *
   * @param host the address to listen on
   * @param port the port, or 0 for an ephemeral one (see {@link #port()})
   * @param codec the codec for frames and payloads
   * @param handler what to do with requests
   * @param maxFrameBytes the largest accepted frame, length prefix included
   * @return the running endpoint
   * @throws IOException if the port cannot be bound
   */
  public static ClientEndpoint start(String host, int port, Codec codec, RequestHandler handler, int maxFrameBytes)
      throws IOException {
    EventLoopGroup boss = new NioEventLoopGroup(1, new DefaultThreadFactory("eyrie-endpoint-accept", true));
    EventLoopGroup workers = new NioEventLoopGroup(2, new DefaultThreadFactory("eyrie-endpoint-io", true));
    ServerBootstrap b = new ServerBootstrap()
        .group(boss, workers)
        .channel(NioServerSocketChannel.class)
        // A restarted node must get its port back while old connections linger in TIME_WAIT.
        .option(ChannelOption.SO_REUSEADDR, true)
        .option(ChannelOption.SO_BACKLOG, 256)
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childOption(ChannelOption.SO_KEEPALIVE, true)
        .childHandler(initializer(codec, handler, maxFrameBytes));
    ChannelFuture bound = b.bind(host, port).awaitUninterruptibly();
    if (!bound.isSuccess()) {
      boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      Throwable cause = bound.cause();
      throw new IOException("cannot bind the client endpoint to " + host + ":" + port + ": " + cause, cause);
    }
    ClientEndpoint e = new ClientEndpoint(boss, workers, bound.channel());
    LOG.debug("client endpoint listening on {}", bound.channel().localAddress());
    return e;
  }

  /** Returns the bound port (useful when started with port 0). */
  public int port() {
    return port;
  }

  /** Stops accepting, closes every connection and stops the endpoint's threads. Idempotent. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    server.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    boss.shutdownGracefully(0, 2, TimeUnit.SECONDS);
    workers.shutdownGracefully(0, 2, TimeUnit.SECONDS);
    boss.terminationFuture().awaitUninterruptibly(5, TimeUnit.SECONDS);
    workers.terminationFuture().awaitUninterruptibly(5, TimeUnit.SECONDS);
  }

  /** The per-connection pipeline; package-private so tests can run it on an EmbeddedChannel. */
  static ChannelInitializer<Channel> initializer(Codec codec, RequestHandler handler, int maxFrameBytes) {
    return new ChannelInitializer<>() {
      @Override
      protected void initChannel(Channel ch) {
        FrameCodec.addFraming(ch.pipeline(), codec, maxFrameBytes)
            .addLast("requests", new RequestDispatcher(handler, maxFrameBytes));
      }
    };
  }

  /** Turns decoded frames into handler calls and every failure into a reply. One per connection. */
  static final class RequestDispatcher extends SimpleChannelInboundHandler<Object> {
    private final RequestHandler handler;
    private final int maxFrameBytes;
    /** Set once the connection is condemned; later frames and errors are ignored. Event loop only. */
    private boolean closing;

    RequestDispatcher(RequestHandler handler, int maxFrameBytes) {
      this.handler = handler;
      this.maxFrameBytes = maxFrameBytes;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, Object msg) {
      if (closing) {
        return;
      }
      if (msg instanceof Wire.ClientRequest r) {
        dispatch(ctx, r.requestId(), () -> handler.multicast(r));
      } else if (msg instanceof Wire.QueryRequest q) {
        dispatch(ctx, q.requestId(), () -> handler.query(q));
      } else if (msg instanceof Wire.ViewRequest v) {
        dispatch(ctx, v.requestId(), () -> handler.view(v));
      } else {
        String type = msg == FrameCodec.NULL_FRAME ? "null" : msg.getClass().getName();
        LOG.debug("{}: unexpected frame type {}", ctx.channel().remoteAddress(), type);
        write(ctx, new Wire.ClientReply(-1, Status.BAD_REQUEST, null, "unexpected frame type " + type, 0));
      }
    }

    private void dispatch(ChannelHandlerContext ctx, long requestId, Supplier<CompletableFuture<Wire.ClientReply>> call) {
      CompletableFuture<Wire.ClientReply> f;
      try {
        f = call.get();
      } catch (RuntimeException e) {
        // The handler promises not to throw; if it does, the client still deserves an answer.
        LOG.warn("request handler threw for request {}", requestId, e);
        f = CompletableFuture.failedFuture(e);
      }
      if (f == null) {
        f = CompletableFuture.failedFuture(new IllegalStateException("the request handler returned no future"));
      }
      // Completes on whatever thread the handler finishes on; Netty hands the write to the event loop.
      f.whenComplete((reply, err) -> write(ctx, answer(requestId, reply, err)));
    }

    private static Wire.ClientReply answer(long requestId, Wire.ClientReply reply, Throwable err) {
      if (err != null) {
        Throwable cause = unwrap(err);
        return new Wire.ClientReply(requestId, Status.ERROR, null, String.valueOf(cause.getMessage()), 0);
      }
      if (reply == null) {
        return new Wire.ClientReply(requestId, Status.ERROR, null, "the request handler returned no reply", 0);
      }
      return new Wire.ClientReply(requestId, reply.status(), reply.body(), reply.error(), reply.leaderHint());
    }

    private static Throwable unwrap(Throwable t) {
      while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
        t = t.getCause();
      }
      return t;
    }

    private void write(ChannelHandlerContext ctx, Wire.ClientReply reply) {
      if (!ctx.channel().isActive() || ctx.executor().isShuttingDown()) {
        // Handlers answer pending requests when the node shuts down; a write to a dead event
        // loop would only log an error about a listener it cannot notify.
        LOG.debug("{}: connection gone, dropping reply {}", ctx.channel().remoteAddress(), reply.requestId());
        return;
      }
      ctx.writeAndFlush(reply).addListener((ChannelFutureListener) f -> {
        if (f.isSuccess()) {
          return;
        }
        if (f.cause() instanceof EncoderException && f.channel().isActive() && reply.body() != null) {
          // Without some answer the client would wait for its attempt timeout and resend in vain.
          LOG.warn("cannot encode the reply to request {}: {}", reply.requestId(), f.cause().toString());
          ctx.writeAndFlush(new Wire.ClientReply(reply.requestId(), Status.ERROR, null,
              "cannot encode the reply: " + f.cause().getMessage(), reply.leaderHint()));
        } else {
          LOG.debug("{}: reply {} not written: {}", f.channel().remoteAddress(), reply.requestId(), f.cause().toString());
        }
      });
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      if (closing) {
        return;
      }
      if (cause instanceof TooLongFrameException) {
        reject(ctx, "frame exceeds " + maxFrameBytes + " bytes");
      } else if (cause instanceof FrameCodec.MalformedFrameException) {
        reject(ctx, cause.getMessage());
      } else if (cause instanceof DecoderException) {
        Throwable c = cause.getCause() != null ? cause.getCause() : cause;
        reject(ctx, "malformed frame: " + c.getMessage());
      } else {
        // Resets and other I/O trouble: nothing to answer, the connection is gone or useless.
        LOG.debug("{}: closing after {}", ctx.channel().remoteAddress(), cause.toString());
        closing = true;
        ctx.close();
      }
    }

    /** Answers once and closes: after a bad frame the byte stream cannot be resynchronized. */
    private void reject(ChannelHandlerContext ctx, String why) {
      LOG.warn("{}: {}; closing the connection", ctx.channel().remoteAddress(), why);
      closing = true;
      ctx.channel().config().setAutoRead(false);
      ctx.writeAndFlush(new Wire.ClientReply(-1, Status.BAD_REQUEST, null, why, 0))
          .addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
      // A client that sends faster than it reads replies stops being read until it catches up,
      // so its backlog stays in its own socket rather than in this node's memory.
      if (!closing) {
        ctx.channel().config().setAutoRead(ctx.channel().isWritable());
      }
      ctx.fireChannelWritabilityChanged();
    }
  }
}
