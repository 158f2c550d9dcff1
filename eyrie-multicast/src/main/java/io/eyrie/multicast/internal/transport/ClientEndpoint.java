package io.eyrie.multicast.internal.transport;

import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Identity;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.multicast.NodeStats;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.TlsConfig;
import io.eyrie.multicast.internal.Wire;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's client port: a Netty server that reads length-prefixed Kryo frames, hands
 * {@link Wire.ClientRequest}s and {@link Wire.QueryRequest}s to a {@link RequestHandler} and
 * writes each answer back with the request's id. This class owns the server (binding, threads,
 * closing), its {@link Limits} and each connection's pipeline; the parts of the pipeline are
 * {@link ConnectionAdmission} (the connection caps, at accept), {@link TlsGate} (the handshake's
 * outcome and the peer's identity) and {@link RequestDispatcher} (a connection's requests, its
 * in-flight bound and its bad frames), which count in one {@link EndpointCounters}.
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

  private final EventLoopGroup boss;
  private final EventLoopGroup workers;
  private final Channel server;
  private final int port;
  private final EndpointCounters counters;
  private final AtomicBoolean closed = new AtomicBoolean();

  private ClientEndpoint(EventLoopGroup boss, EventLoopGroup workers, Channel server, EndpointCounters counters) {
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
    EndpointCounters counters = new EndpointCounters();
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
        .handler(new ConnectionAdmission(limits, counters))
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
  public NodeStats.Endpoint stats() {
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
    return initializer(codec, handler, Limits.withMaxFrameBytes(maxFrameBytes), new EndpointCounters());
  }

  static ChannelInitializer<Channel> initializer(Codec codec, RequestHandler handler, Limits limits, EndpointCounters counters) {
    return initializer(codec, handler, limits, counters, null, 0);
  }

  static ChannelInitializer<Channel> initializer(Codec codec, RequestHandler handler, Limits limits, EndpointCounters counters,
      TlsConfig tls, long handshakeTimeoutMs) {
    return new ChannelInitializer<>() {
      @Override
      protected void initChannel(Channel ch) {
        String refusal = ch.attr(ConnectionAdmission.REFUSAL).get();
        if (refusal != null && tls == null) {
          ConnectionAdmission.refuse(ch, codec, refusal);
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

  /**
   * Returns the identity the peer of a connection to this endpoint presented in its certificate,
   * or null without TLS (or before the handshake finished).
   *
   * @param ch a connection accepted by an endpoint
   * @return the peer's identity, or null
   */
  public static Identity peer(Channel ch) {
    return ch.attr(TlsGate.PEER).get();
  }
}
