package io.eyrie.tools;

import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.GroupStatus;
import io.eyrie.multicast.Node;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's HTTP endpoint for operators:
 *
 * <ul>
 *   <li>{@code /metrics}: Prometheus text format: {@link NodeMetrics}, the JVM's memory and
 *       threads, this endpoint's own limits, and Ratis's own metrics (elections, log appends,
 *       commit indexes: prefixed {@code ratis_}, labelled with the Ratis registry they come from);
 *   <li>{@code /ready}: 200 when every hosted group has a leader and this replica has applied
 *       every entry it knows to be committed, else 503; the body says which group is not.
 *   <li>{@code /health}: liveness: 200 whenever this endpoint answers at all, whatever the groups
 *       do (a node whose groups have no leader is alive but not ready).
 * </ul>
 *
 * <p>No client can stall it for the others ({@link Limits}): connections are served by one
 * Netty event loop, which never waits for a client; a request is answered (on one daemon thread)
 * only once it has fully arrived; a connection that holds a started request, or nothing at all,
 * for the request timeout is closed; and connections past the cap are answered 503 and closed
 * as they are accepted. Timeouts and refusals count in {@code /metrics}
 * ({@code eyrie_http_timeouts_total}, {@code eyrie_http_refused_total}).
 */
final class NodeHttp implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(NodeHttp.class);

  /**
   * The endpoint's limits.
   *
   * @param requestTimeoutMs how long a connection may hold a started request that has not fully
   *     arrived, or sit idle between requests, before it is closed
   * @param maxConnections the most open connections; further ones get 503 and are closed
   */
  public record Limits(int requestTimeoutMs, int maxConnections) {
    /** 10 s to send a request; 64 connections. */
    public static final Limits DEFAULT = new Limits(10_000, 64);

    /** Checks the limits. */
    public Limits {
      if (requestTimeoutMs <= 0 || maxConnections <= 0) {
        throw new IllegalArgumentException("limits must be positive: " + requestTimeoutMs + ", " + maxConnections);
      }
    }
  }

  private final Node node;
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final NodeMetrics metrics;
  private final Limits limits;
  private final EventLoopGroup loop;
  private final ExecutorService answers;
  private final Channel server;
  private final AtomicInteger connections = new AtomicInteger();
  private final Counter refused;
  private final Counter timeouts;
  private final AtomicLong lastWarning = new AtomicLong(System.nanoTime() - TimeUnit.SECONDS.toNanos(1));
  private final AtomicLong warningsLeftOut = new AtomicLong();

  private NodeHttp(Node node, String host, int port, Limits limits) throws IOException {
    this.node = node;
    this.limits = limits;
    this.metrics = new NodeMetrics(node);
    metrics.bindTo(registry);
    new io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics().bindTo(registry);
    new io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics().bindTo(registry);
    Tags nodeTag = Tags.of("node", Integer.toString(node.id()));
    this.refused = Counter.builder("eyrie.http.refused").description("HTTP connections refused over the cap")
        .tags(nodeTag).register(registry);
    this.timeouts = Counter.builder("eyrie.http.timeouts")
        .description("HTTP connections closed for a request not received within the timeout").tags(nodeTag)
        .register(registry);
    Gauge.builder("eyrie.http.connections", connections, AtomicInteger::get).description("open HTTP connections")
        .tags(nodeTag).register(registry);
    this.loop = new NioEventLoopGroup(1, new DefaultThreadFactory("eyrie-http-io-" + node.id(), true));
    this.answers = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "eyrie-http-" + node.id());
      t.setDaemon(true);
      return t;
    });
    ServerBootstrap b = new ServerBootstrap().group(loop).channel(NioServerSocketChannel.class)
        .option(ChannelOption.SO_REUSEADDR, true)
        .option(ChannelOption.SO_BACKLOG, 64)
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childHandler(new ChannelInitializer<Channel>() {
          @Override
          protected void initChannel(Channel ch) {
            accept(ch);
          }
        });
    ChannelFuture bound = b.bind(host, port).awaitUninterruptibly();
    if (!bound.isSuccess()) {
      answers.shutdownNow();
      loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
      throw new IOException("cannot bind the HTTP endpoint to " + host + ":" + port + ": " + bound.cause(),
          bound.cause());
    }
    this.server = bound.channel();
  }

  /**
   * Starts serving with {@link Limits#DEFAULT}.
   *
   * @param node the node
   * @param host the address to listen on
   * @param port the port (0 picks a free one)
   * @return the running endpoint
   * @throws IOException if the port cannot be bound
   */
  public static NodeHttp start(Node node, String host, int port) throws IOException {
    return start(node, host, port, Limits.DEFAULT);
  }

  /**
   * Starts serving.
   *
   * @param node the node
   * @param host the address to listen on
   * @param port the port (0 picks a free one)
   * @param limits the endpoint's limits
   * @return the running endpoint
   * @throws IOException if the port cannot be bound
   */
  public static NodeHttp start(Node node, String host, int port, Limits limits) throws IOException {
    return new NodeHttp(node, host, port, limits);
  }

  /** Returns the port it listens on. */
  public int port() {
    return ((InetSocketAddress) server.localAddress()).getPort();
  }

  /** Returns the number of open connections. */
  public int connections() {
    return connections.get();
  }

  /** Sets up an accepted connection, or refuses it over the cap. */
  private void accept(Channel ch) {
    if (connections.incrementAndGet() > limits.maxConnections()) {
      connections.decrementAndGet();
      refused.increment();
      warn("{}: HTTP connection refused, {} open (cap {})", ch.remoteAddress(), limits.maxConnections(),
          limits.maxConnections());
      ch.config().setAutoRead(false);
      ByteBuf busy = Unpooled.copiedBuffer("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
          + "Connection: close\r\n\r\n", StandardCharsets.US_ASCII);
      ch.writeAndFlush(busy).addListener(ChannelFutureListener.CLOSE);
      return;
    }
    ch.closeFuture().addListener(f -> connections.decrementAndGet());
    Guard guard = new Guard();
    ch.pipeline()
        .addLast("idle", new IdleStateHandler(limits.requestTimeoutMs(), 0, 0, TimeUnit.MILLISECONDS))
        .addLast("guard", guard)
        .addLast("http", new HttpServerCodec(4096, 8192, 8192))
        .addLast("aggregate", new HttpObjectAggregator(16 << 10))
        .addLast("answer", new Answerer(guard));
  }

  /**
   * Watches one connection: whether it holds part of a request, and closes it when it has sent
   * nothing for the timeout (counted as a timeout when a request had started). Event loop only.
   */
  private final class Guard extends ChannelDuplexHandler {
    /** Bytes of a request that has not fully arrived yet. */
    boolean partial;
    /** Requests received and not answered yet. */
    int serving;

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
      if (msg instanceof ByteBuf b && b.isReadable()) {
        partial = true;
      }
      ctx.fireChannelRead(msg);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
      if (evt instanceof IdleStateEvent e && e.state() == IdleState.READER_IDLE) {
        if (serving > 0) {
          return; // the node is answering: not the client's idleness
        }
        if (partial) {
          timeouts.increment();
          warn("{}: HTTP request not received within {} ms; closing the connection", ctx.channel().remoteAddress(),
              limits.requestTimeoutMs());
        }
        ctx.close();
        return;
      }
      ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      LOG.debug("{}: closing the HTTP connection after {}", ctx.channel().remoteAddress(), cause.toString());
      ctx.close();
    }
  }

  /** Answers each complete request, in order, on the endpoint's thread; reads no more meanwhile. */
  private final class Answerer extends SimpleChannelInboundHandler<FullHttpRequest> {
    private final Guard guard;

    Answerer(Guard guard) {
      this.guard = guard;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
      guard.partial = false;
      guard.serving++;
      ctx.channel().config().setAutoRead(false);
      boolean keepAlive = HttpUtil.isKeepAlive(req) && req.decoderResult().isSuccess();
      HttpMethod method = req.method();
      String path = new QueryStringDecoder(req.uri()).path();
      boolean bad = req.decoderResult().isFailure();
      try {
        answers.execute(() -> {
          FullHttpResponse r = bad ? response(HttpResponseStatus.BAD_REQUEST, "bad request\n")
              : answer(method, path);
          boolean head = HttpMethod.HEAD.equals(method);
          if (head) {
            r.content().clear();
          }
          if (keepAlive) {
            r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
          } else {
            r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
          }
          ctx.writeAndFlush(r).addListener((ChannelFutureListener) f -> {
            if (!keepAlive || !f.isSuccess()) {
              f.channel().close();
              return;
            }
            guard.serving--;
            if (guard.serving == 0) {
              f.channel().config().setAutoRead(true);
            }
          });
        });
      } catch (RejectedExecutionException e) {
        ctx.close(); // the endpoint is closing
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      LOG.debug("{}: closing the HTTP connection after {}", ctx.channel().remoteAddress(), cause.toString());
      ctx.close();
    }
  }

  /** The answer to a complete request; runs on the endpoint's thread. */
  private FullHttpResponse answer(HttpMethod method, String path) {
    if (!HttpMethod.GET.equals(method) && !HttpMethod.HEAD.equals(method)) {
      return response(HttpResponseStatus.METHOD_NOT_ALLOWED, "GET or HEAD only\n");
    }
    try {
      switch (path) {
        case "/metrics" -> {
          metrics.bindGroups(registry); // groups added to the running cluster since
          FullHttpResponse r = response(HttpResponseStatus.OK, registry.scrape() + RatisMetricsText.scrape());
          r.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8");
          return r;
        }
        case "/health" -> {
          return response(HttpResponseStatus.OK, "alive\n");
        }
        case "/ready" -> {
          List<String> notReady = notReady();
          return response(notReady.isEmpty() ? HttpResponseStatus.OK : HttpResponseStatus.SERVICE_UNAVAILABLE,
              notReady.isEmpty() ? "ready\n" : String.join("\n", notReady) + "\n");
        }
        default -> {
          return response(HttpResponseStatus.NOT_FOUND, "not found: " + path + "\n");
        }
      }
    } catch (RuntimeException e) {
      LOG.warn("node {}: cannot answer {}: {}", node.id(), path, e.toString());
      return response(HttpResponseStatus.INTERNAL_SERVER_ERROR, "error: " + e + "\n");
    }
  }

  private static FullHttpResponse response(HttpResponseStatus status, String body) {
    ByteBuf content = Unpooled.copiedBuffer(body, StandardCharsets.UTF_8);
    FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, content);
    r.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8");
    HttpUtil.setContentLength(r, content.readableBytes());
    return r;
  }

  /** Logs a warning a client can provoke, at most once a second; the next says how many were left out. */
  private void warn(String format, Object... args) {
    long now = System.nanoTime();
    long last = lastWarning.get();
    if (now - last < TimeUnit.SECONDS.toNanos(1) || !lastWarning.compareAndSet(last, now)) {
      warningsLeftOut.incrementAndGet();
      return;
    }
    long left = warningsLeftOut.getAndSet(0);
    LOG.warn(left == 0 ? format : format + " (" + left + " more warnings not logged)", args);
  }

  /** Returns why this node is not ready, one line per group; empty when it is. */
  public List<String> notReady() {
    List<String> out = new ArrayList<>();
    for (GroupId g : node.groups()) {
      GroupStatus s = node.localStatus(g);
      GroupStatus.Replica r = s.replicas().get(0);
      if (!r.reachable()) {
        out.add(g + ": no local replica");
      } else if (s.leader() == 0) {
        out.add(g + ": no leader");
      } else if (s.lag(r) > 0) {
        out.add(g + ": applied " + r.appliedIndex() + " of " + r.commitIndex() + " committed");
      }
    }
    return out;
  }

  @Override
  public void close() {
    server.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    answers.shutdownNow();
    loop.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
  }
}
