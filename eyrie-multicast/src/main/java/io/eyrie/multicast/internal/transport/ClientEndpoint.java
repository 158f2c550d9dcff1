package io.eyrie.multicast.internal.transport;

import io.eyrie.multicast.Codec;
import io.eyrie.multicast.EndpointStats;
import io.eyrie.multicast.Identity;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.TlsConfig;
import io.eyrie.multicast.internal.Wire;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.EncoderException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.ssl.SslHandshakeTimeoutException;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import javax.net.ssl.SSLException;
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
 *
 * <p>No connection can hold the node hostage ({@link Limits}): a connection that holds a started
 * frame without sending any more of it for the idle timeout is answered and closed; connections
 * over the node's or the remote address's cap are answered UNAVAILABLE and closed as they are
 * accepted, while the open ones keep working; a connection with the maximum number of requests
 * unanswered is not read until one is answered (its backlog stays in its own socket); and past
 * the node's bound on pending requests a request is answered UNAVAILABLE ("busy") at once. Each
 * limit counts in {@link #stats()} when it fires and logs a warning with the remote address, at
 * most {@link RateLimitedWarnings#PER_SECOND} a second per limit.
 *
 * <p>With a {@link TlsConfig} the port runs mutual TLS: an {@link SslHandler} comes first in
 * every connection's pipeline, the client must present a certificate signed by the CA, a
 * handshake that does not finish within its timeout is closed, and the peer's {@link Identity}
 * is recorded on the channel ({@link #peer(Channel)}) and handed to the {@link RequestHandler}
 * with each request. A plaintext client gets one plaintext frame saying that
 * the port requires TLS (status {@code FORBIDDEN}); a failed handshake is counted and logged with its reason.
 */
public final class ClientEndpoint implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ClientEndpoint.class);

  /**
   * The endpoint's limits; see the {@link NodeOptions} of the same names.
   *
   * @param maxFrameBytes the largest accepted frame, length prefix included
   * @param frameIdleTimeoutMs how long a started frame may wait for its next byte; 0 for ever
   * @param maxConnections the most open connections
   * @param maxConnectionsPerAddress the most open connections from one remote address
   * @param maxInFlightPerConnection the most unanswered requests of one connection being worked on
   * @param maxPendingRequests the most unanswered multicasts and queries over all connections
   */
  public record Limits(int maxFrameBytes, int frameIdleTimeoutMs, int maxConnections, int maxConnectionsPerAddress,
      int maxInFlightPerConnection, int maxPendingRequests) {
    /** The limits a node's options give. */
    public static Limits of(NodeOptions o) {
      return new Limits(o.maxFrameBytes(), o.frameIdleTimeoutMs(), o.maxClientConnections(),
          o.maxClientConnectionsPerAddress(), o.maxInFlightPerConnection(), o.maxPendingRequests());
    }

    /** The default limits, with the given frame limit. */
    public static Limits withMaxFrameBytes(int maxFrameBytes) {
      return new Limits(maxFrameBytes, NodeOptions.FRAME_IDLE_TIMEOUT_MS_DEFAULT,
          NodeOptions.MAX_CLIENT_CONNECTIONS_DEFAULT, NodeOptions.MAX_CLIENT_CONNECTIONS_PER_ADDRESS_DEFAULT,
          NodeOptions.MAX_IN_FLIGHT_PER_CONNECTION_DEFAULT, NodeOptions.MAX_PENDING_REQUESTS_DEFAULT);
    }
  }

  /** What the limits did, and what the endpoint holds now; shared by the connections. */
  static final class Counters {
    final AtomicInteger connections = new AtomicInteger();
    final ConcurrentHashMap<InetAddress, Integer> perAddress = new ConcurrentHashMap<>();
    final AtomicInteger pending = new AtomicInteger();
    final AtomicInteger held = new AtomicInteger();
    final AtomicInteger peakHeldOnOneConnection = new AtomicInteger();
    final AtomicLong refusedNodeCap = new AtomicLong();
    final AtomicLong refusedAddressCap = new AtomicLong();
    final AtomicLong frameTimeouts = new AtomicLong();
    final AtomicLong oversizedFrames = new AtomicLong();
    final AtomicLong malformedFrames = new AtomicLong();
    final AtomicLong readPauses = new AtomicLong();
    final AtomicLong busyReplies = new AtomicLong();
    final AtomicLong handshakeTimeouts = new AtomicLong();
    final AtomicLong handshakeFailures = new AtomicLong();
    final AtomicLong forbidden = new AtomicLong();
    final RateLimitedWarnings warnings = new RateLimitedWarnings(LOG);

    EndpointStats snapshot() {
      return new EndpointStats(connections.get(), held.get(), refusedNodeCap.get(), refusedAddressCap.get(),
          frameTimeouts.get(), oversizedFrames.get(), malformedFrames.get(), readPauses.get(), busyReplies.get(),
          handshakeTimeouts.get(), handshakeFailures.get(), forbidden.get());
    }
  }

  private final EventLoopGroup boss;
  private final EventLoopGroup workers;
  private final Channel server;
  private final int port;
  private final Counters counters;
  private final AtomicBoolean closed = new AtomicBoolean();

  private ClientEndpoint(EventLoopGroup boss, EventLoopGroup workers, Channel server, Counters counters) {
    this.boss = boss;
    this.workers = workers;
    this.server = server;
    this.counters = counters;
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
    return start(host, port, codec, handler, Limits.withMaxFrameBytes(maxFrameBytes));
  }

  /**
   * Binds the endpoint and starts serving.
   *
   * @param host the address to listen on
   * @param port the port, or 0 for an ephemeral one (see {@link #port()})
   * @param codec the codec for frames and payloads
   * @param handler what to do with requests
   * @param limits the endpoint's limits
   * @return the running endpoint
   * @throws IOException if the port cannot be bound
   */
  public static ClientEndpoint start(String host, int port, Codec codec, RequestHandler handler, Limits limits)
      throws IOException {
    return start(host, port, codec, handler, limits, null, NodeOptions.TLS_HANDSHAKE_TIMEOUT_MS_DEFAULT);
  }

  /**
   * Binds the endpoint and starts serving, with mutual TLS when {@code tls} is given.
   *
   * @param host the address to listen on
   * @param port the port, or 0 for an ephemeral one (see {@link #port()})
   * @param codec the codec for frames and payloads
   * @param handler what to do with requests
   * @param limits the endpoint's limits
   * @param tls the node's TLS configuration, or null for plaintext
   * @param handshakeTimeoutMs how long a TLS handshake may take
   * @return the running endpoint
   * @throws IOException if the port cannot be bound
   */
  public static ClientEndpoint start(String host, int port, Codec codec, RequestHandler handler, Limits limits,
      TlsConfig tls, long handshakeTimeoutMs) throws IOException {
    Counters counters = new Counters();
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
        .handler(new Admission(limits, counters))
        .childHandler(initializer(codec, handler, limits, counters, tls, handshakeTimeoutMs));
    ChannelFuture bound = b.bind(host, port).awaitUninterruptibly();
    if (!bound.isSuccess()) {
      boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      Throwable cause = bound.cause();
      throw new IOException("cannot bind the client endpoint to " + host + ":" + port + ": " + cause, cause);
    }
    ClientEndpoint e = new ClientEndpoint(boss, workers, bound.channel(), counters);
    LOG.debug("client endpoint listening on {}", bound.channel().localAddress());
    return e;
  }

  /** Returns the bound port (useful when started with port 0). */
  public int port() {
    return port;
  }

  /** Returns what the endpoint's limits did since it started, and what it holds now. */
  public EndpointStats stats() {
    return counters.snapshot();
  }

  /**
   * Returns the most requests one connection has had the endpoint hold at once (being worked
   * on, or read and waiting for the in-flight bound) since the endpoint started; for tests.
   */
  int peakHeldOnOneConnection() {
    return counters.peakHeldOnOneConnection.get();
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

  /** The per-connection pipeline with default limits; package-private so tests can run it on an EmbeddedChannel. */
  static ChannelInitializer<Channel> initializer(Codec codec, RequestHandler handler, int maxFrameBytes) {
    return initializer(codec, handler, Limits.withMaxFrameBytes(maxFrameBytes), new Counters());
  }

  static ChannelInitializer<Channel> initializer(Codec codec, RequestHandler handler, Limits limits, Counters counters) {
    return initializer(codec, handler, limits, counters, null, 0);
  }

  static ChannelInitializer<Channel> initializer(Codec codec, RequestHandler handler, Limits limits, Counters counters,
      TlsConfig tls, long handshakeTimeoutMs) {
    return new ChannelInitializer<>() {
      @Override
      protected void initChannel(Channel ch) {
        String refusal = ch.attr(REFUSAL).get();
        if (refusal != null && tls == null) {
          refuse(ch, codec, refusal);
          return;
        }
        if (tls != null) {
          SslHandler ssl = new IdleBoundedSslHandler(tls.newServerEngine(), limits.frameIdleTimeoutMs());
          ssl.setHandshakeTimeoutMillis(handshakeTimeoutMs);
          ch.pipeline().addLast("ssl", ssl).addLast("tlsGate", new TlsGate(codec, counters));
        }
        if (refusal != null) {
          // Over TLS the refusal is only readable after the handshake: TlsGate answers it then.
          FrameCodec.addFraming(ch.pipeline(), codec, limits.maxFrameBytes(), limits.frameIdleTimeoutMs());
          return;
        }
        FrameCodec.addFraming(ch.pipeline(), codec, limits.maxFrameBytes(), limits.frameIdleTimeoutMs())
            .addLast("requests", new RequestDispatcher(handler, limits, counters));
      }
    };
  }

  /** The identity of a TLS connection's peer, set once its handshake succeeded. */
  private static final AttributeKey<Identity> PEER = AttributeKey.valueOf(ClientEndpoint.class, "peer");

  /**
   * Returns the identity the peer of a connection to this endpoint presented in its certificate,
   * or null without TLS (or before the handshake finished).
   *
   * @param ch a connection accepted by an endpoint
   * @return the peer's identity, or null
   */
  public static Identity peer(Channel ch) {
    return ch.attr(PEER).get();
  }

  /**
   * Sits right behind the {@link SslHandler}: records the peer's identity when the handshake
   * succeeds, and answers, counts and logs a failed one. A connection refused at accept
   * ({@link Admission}) is answered here, after its handshake, so that the client can read why.
   */
  private static final class TlsGate extends ChannelInboundHandlerAdapter {
    private final Codec codec;
    private final Counters counters;

    TlsGate(Codec codec, Counters counters) {
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
      String refusal = ch.attr(REFUSAL).get();
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
        byte[] body = codec.encode(new Wire.ClientReply(-1, Status.FORBIDDEN, null,
            "plaintext refused: this node's client port requires mutual TLS (connect with a TlsConfig:"
                + " a certificate signed by the cluster's CA)", 0));
        ByteBuf frame = Unpooled.buffer(4 + body.length).writeInt(body.length).writeBytes(body);
        ctx.pipeline().context(SslHandler.class).writeAndFlush(frame);
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

  /** Why a connection was refused at accept; set by {@link Admission}, answered by the connection's initializer. */
  private static final AttributeKey<String> REFUSAL = AttributeKey.valueOf(ClientEndpoint.class, "refusal");

  /**
   * Counts each accepted connection against the node's and its address's caps, on the accepting
   * thread and in the order of acceptance; one over either cap is marked refused (answered
   * UNAVAILABLE with request id -1 and closed as soon as it is set up). The open connections are
   * not touched.
   */
  private static final class Admission extends ChannelInboundHandlerAdapter {
    private final Limits limits;
    private final Counters counters;

    Admission(Limits limits, Counters counters) {
      this.limits = limits;
      this.counters = counters;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof Channel ch) {
        String refusal = admit(ch);
        if (refusal != null) {
          ch.attr(REFUSAL).set(refusal);
        }
      }
      ctx.fireChannelRead(msg);
    }

    private String admit(Channel ch) {
      SocketAddress remote = ch.remoteAddress();
      InetAddress address = remote instanceof InetSocketAddress isa ? isa.getAddress() : null;
      if (counters.connections.incrementAndGet() > limits.maxConnections()) {
        counters.connections.decrementAndGet();
        counters.refusedNodeCap.incrementAndGet();
        counters.warnings.warn("connection cap", "{}: refused, the node has {} client connections open (cap {})",
            remote, limits.maxConnections(), limits.maxConnections());
        return "the node has " + limits.maxConnections() + " client connections open";
      }
      if (address != null) {
        boolean[] over = new boolean[1];
        counters.perAddress.compute(address, (a, n) -> {
          int open = n == null ? 0 : n;
          if (open >= limits.maxConnectionsPerAddress()) {
            over[0] = true;
            return n;
          }
          return open + 1;
        });
        if (over[0]) {
          counters.connections.decrementAndGet();
          counters.refusedAddressCap.incrementAndGet();
          counters.warnings.warn("address cap", "{}: refused, {} client connections from that address are open (cap {})",
              remote, limits.maxConnectionsPerAddress(), limits.maxConnectionsPerAddress());
          return "the node has " + limits.maxConnectionsPerAddress() + " client connections open from "
              + address.getHostAddress();
        }
      }
      ch.closeFuture().addListener(f -> {
        counters.connections.decrementAndGet();
        if (address != null) {
          counters.perAddress.computeIfPresent(address, (a, n) -> n <= 1 ? null : n - 1);
        }
      });
      return null;
    }
  }

  /** Answers a refused connection once, without reading it, and closes it. */
  private static void refuse(Channel ch, Codec codec, String why) {
    ch.config().setAutoRead(false);
    byte[] body = codec.encode(new Wire.ClientReply(-1, Status.UNAVAILABLE, null, why, 0));
    ByteBuf frame = Unpooled.buffer(4 + body.length).writeInt(body.length).writeBytes(body);
    ch.writeAndFlush(frame).addListener(ChannelFutureListener.CLOSE);
  }

  /**
   * Turns decoded frames into handler calls and every failure into a reply, and keeps the
   * connection's in-flight bound. One per connection; its fields are the event loop's.
   */
  static final class RequestDispatcher extends SimpleChannelInboundHandler<Object> {
    private final RequestHandler handler;
    private final Limits limits;
    private final Counters counters;
    /** Set once the connection is condemned; later frames and errors are ignored. */
    private boolean closing;
    /** Requests handed to the handler and not answered yet. */
    private int inFlight;
    /** Requests read while {@link #inFlight} was at the bound, in arrival order. */
    private final ArrayDeque<Object> waiting = new ArrayDeque<>();
    /** True while the connection is not read because of the in-flight bound. */
    private boolean paused;

    RequestDispatcher(RequestHandler handler, Limits limits, Counters counters) {
      this.handler = handler;
      this.limits = limits;
      this.counters = counters;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, Object msg) {
      if (closing) {
        return;
      }
      if (isRequest(msg) && (inFlight >= limits.maxInFlightPerConnection() || !waiting.isEmpty())) {
        waiting.add(msg);
        held(1);
        pause(ctx);
        return;
      }
      handle(ctx, msg);
    }

    private static boolean isRequest(Object msg) {
      return msg instanceof Wire.ClientRequest || msg instanceof Wire.QueryRequest || msg instanceof Wire.ViewRequest;
    }

    private void handle(ChannelHandlerContext ctx, Object msg) {
      Identity peer = ctx.channel().attr(PEER).get();
      if (msg instanceof Wire.ClientRequest r) {
        dispatch(ctx, r.requestId(), true, () -> handler.multicast(r, peer));
      } else if (msg instanceof Wire.QueryRequest q) {
        dispatch(ctx, q.requestId(), true, () -> handler.query(q, peer));
      } else if (msg instanceof Wire.ViewRequest v) {
        dispatch(ctx, v.requestId(), false, () -> handler.view(v));
      } else {
        String type = msg == FrameCodec.NULL_FRAME ? "null" : msg.getClass().getName();
        LOG.debug("{}: unexpected frame type {}", ctx.channel().remoteAddress(), type);
        write(ctx, new Wire.ClientReply(-1, Status.BAD_REQUEST, null, "unexpected frame type " + type, 0));
      }
    }

    /** Stops reading the connection until its in-flight requests fall below the bound. */
    private void pause(ChannelHandlerContext ctx) {
      if (paused) {
        return;
      }
      paused = true;
      counters.readPauses.incrementAndGet();
      counters.warnings.warn("in-flight bound", "{}: {} requests in flight, not reading the connection until one is answered",
          ctx.channel().remoteAddress(), inFlight);
      updateAutoRead(ctx);
    }

    /** Counts requests held (being worked on or waiting) by this connection. */
    private void held(int delta) {
      counters.held.addAndGet(delta);
      if (delta > 0) {
        int mine = inFlight + waiting.size();
        counters.peakHeldOnOneConnection.accumulateAndGet(mine, Math::max);
      }
    }

    /** A request of this connection was answered: take the next waiting ones, and read again once none wait. */
    private void answered(ChannelHandlerContext ctx) {
      inFlight--;
      held(-1);
      while (!closing && !waiting.isEmpty() && inFlight < limits.maxInFlightPerConnection()) {
        Object next = waiting.poll();
        held(-1);
        handle(ctx, next);
      }
      if (paused && waiting.isEmpty() && inFlight < limits.maxInFlightPerConnection()) {
        paused = false;
        updateAutoRead(ctx);
      }
    }

    /** Reads the connection only while it is not condemned, not paused and its replies can be written. */
    private void updateAutoRead(ChannelHandlerContext ctx) {
      boolean read = !closing && !paused && ctx.channel().isWritable();
      if (read != ctx.channel().config().isAutoRead()) {
        if (read) {
          FrameCodec.FrameDecoder d = ctx.pipeline().get(FrameCodec.FrameDecoder.class);
          if (d != null) {
            d.readingResumed();
          }
        }
        ctx.channel().config().setAutoRead(read);
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
      // Waiting requests were never handed to the handler: drop them. Those in flight are
      // released as their answers come.
      held(-waiting.size());
      waiting.clear();
      super.channelInactive(ctx);
    }

    private void dispatch(ChannelHandlerContext ctx, long requestId, boolean pending,
        Supplier<CompletableFuture<Wire.ClientReply>> call) {
      if (pending && counters.pending.incrementAndGet() > limits.maxPendingRequests()) {
        counters.pending.decrementAndGet();
        counters.busyReplies.incrementAndGet();
        counters.warnings.warn("pending bound", "{}: busy, request {} refused: the node has {} requests pending (bound {})",
            ctx.channel().remoteAddress(), requestId, limits.maxPendingRequests(), limits.maxPendingRequests());
        write(ctx, new Wire.ClientReply(requestId, Status.UNAVAILABLE, null,
            "busy: the node has " + limits.maxPendingRequests() + " requests pending; try again later", 0));
        return;
      }
      inFlight++;
      held(1);
      if (inFlight >= limits.maxInFlightPerConnection()) {
        pause(ctx);
      }
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
      f.whenComplete((reply, err) -> {
        if (pending) {
          counters.pending.decrementAndGet();
        }
        if (reply != null && reply.status() == Status.FORBIDDEN) {
          counters.forbidden.incrementAndGet();
          counters.warnings.warn("forbidden", "{} {}: request {} refused: {}", ctx.channel().remoteAddress(),
              ctx.channel().attr(PEER).get(), requestId, reply.error());
        }
        write(ctx, answer(requestId, reply, err));
        if (ctx.executor().inEventLoop()) {
          answered(ctx);
        } else if (!ctx.executor().isShuttingDown()) {
          try {
            ctx.executor().execute(() -> answered(ctx));
          } catch (java.util.concurrent.RejectedExecutionException e) {
            counters.held.decrementAndGet(); // the endpoint is closing
          }
        } else {
          counters.held.decrementAndGet();
        }
      });
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
        counters.oversizedFrames.incrementAndGet();
        reject(ctx, "frame limit", "frame exceeds " + limits.maxFrameBytes() + " bytes");
      } else if (cause instanceof FrameCodec.FrameIdleException) {
        counters.frameTimeouts.incrementAndGet();
        reject(ctx, "frame idle timeout", cause.getMessage());
      } else if (cause instanceof FrameCodec.MalformedFrameException) {
        counters.malformedFrames.incrementAndGet();
        reject(ctx, "malformed frame", cause.getMessage());
      } else if (cause instanceof DecoderException) {
        counters.malformedFrames.incrementAndGet();
        Throwable c = cause.getCause() != null ? cause.getCause() : cause;
        reject(ctx, "malformed frame", "malformed frame: " + c.getMessage());
      } else {
        // Resets and other I/O trouble: nothing to answer, the connection is gone or useless.
        LOG.debug("{}: closing after {}", ctx.channel().remoteAddress(), cause.toString());
        closing = true;
        ctx.close();
      }
    }

    /** Answers once and closes: after a bad frame the byte stream cannot be resynchronized. */
    private void reject(ChannelHandlerContext ctx, String limit, String why) {
      counters.warnings.warn(limit, "{}: {}; closing the connection", ctx.channel().remoteAddress(), why);
      closing = true;
      ctx.channel().config().setAutoRead(false);
      ctx.writeAndFlush(new Wire.ClientReply(-1, Status.BAD_REQUEST, null, why, 0))
          .addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
      // A client that sends faster than it reads replies stops being read until it catches up,
      // so its backlog stays in its own socket rather than in this node's memory.
      updateAutoRead(ctx);
      ctx.fireChannelWritabilityChanged();
    }
  }
}
