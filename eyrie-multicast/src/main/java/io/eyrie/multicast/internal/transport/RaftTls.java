package io.eyrie.multicast.internal.transport;

import io.eyrie.multicast.Identity;
import io.eyrie.multicast.TlsConfig;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.client.impl.RaftClientRpcWithProxy;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.netty.NettyConfigKeys;
import org.apache.ratis.netty.NettyRpcProxy;
import org.apache.ratis.netty.server.NettyRpcService;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.RaftServerRpc;
import org.apache.ratis.thirdparty.io.netty.channel.Channel;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelHandlerContext;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelInboundHandlerAdapter;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelOutboundHandlerAdapter;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelPromise;
import org.apache.ratis.thirdparty.io.netty.channel.EventLoopGroup;
import org.apache.ratis.thirdparty.io.netty.channel.nio.NioEventLoopGroup;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslHandler;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslHandshakeCompletionEvent;
import org.apache.ratis.util.PeerProxyMap;
import org.apache.ratis.util.function.CheckedFunction;
import org.slf4j.LoggerFactory;

/**
 * Mutual TLS on Ratis's Netty RPC, which in Ratis 3.3.0 takes no TLS configuration (only its
 * DataStream and gRPC transports do; RATIS-2634). This class owns how it is put there: the
 * server's worker group and the peer proxies' group are wrapped in a {@link
 * HookedEventLoopGroup} that puts an {@link SslHandler} first in each channel's pipeline, ahead
 * of the handlers Ratis adds. The server end requires a certificate with the role {@code node}
 * and refuses any other at the handshake ({@link TlsConfig#newPeerServerEngine()}); the client
 * end presents the node's certificate and checks the server's names the host dialled and is a
 * node's. Refusals on the Raft port are logged (rate-limited) with the peer's address and why.
 *
 * <p>Ratis builds its pipelines in private code, so this reaches three private fields of Ratis
 * 3.3.0 by reflection ({@code NettyRpcService.workerGroup}, {@code NettyRpcProxy.PeerMap.group},
 * {@code PeerProxyMap.createProxy}); if a Ratis upgrade renames one, a node with TLS refuses to
 * start, saying which, rather than run the Raft port in plaintext.
 */
public final class RaftTls {
  /** The {@link Parameters} key of the node's {@link TlsConfig}. */
  static final String TLS_KEY = "eyrie.raft.tls";
  /** The {@link Parameters} key of the TLS handshake timeout, in milliseconds. */
  static final String HANDSHAKE_TIMEOUT_KEY = "eyrie.raft.tls.handshake-timeout-ms";
  private static final String HANDLER = "eyrie-tls";
  private static final RateLimitedWarnings WARNINGS = new RateLimitedWarnings(LoggerFactory.getLogger(RaftTls.class));

  private RaftTls() {}

  /**
   * Ratis parameters carrying a node's TLS to {@link EyrieNettyRpc}.
   *
   * @param tls the node's configuration (a node certificate), or null for plaintext
   * @param handshakeTimeoutMs how long a TLS handshake may take
   * @return the parameters
   */
  public static Parameters parameters(TlsConfig tls, int handshakeTimeoutMs) {
    Parameters p = new Parameters();
    if (tls != null) {
      p.put(TLS_KEY, tls, TlsConfig.class);
      p.put(HANDSHAKE_TIMEOUT_KEY, handshakeTimeoutMs, Integer.class);
    }
    return p;
  }

  /**
   * Sets what Ratis's Netty RPC needs for TLS in properties: its peer proxies on NIO (the wrapped
   * group must be, for Ratis picks the channel type by the group's class).
   */
  static void configure(RaftProperties p) {
    NettyConfigKeys.Client.setUseEpoll(p, false);
  }

  /** The configuration in the parameters, or null; refuses one that is not a node's. */
  static TlsConfig of(Parameters p) {
    TlsConfig tls = p == null ? null : p.get(TLS_KEY, TlsConfig.class);
    if (tls != null && tls.identity().role() != Identity.Role.NODE) {
      throw new IllegalArgumentException(tls.certFile() + ": the Raft port needs a node certificate, not that of "
          + tls.identity());
    }
    return tls;
  }

  static int handshakeTimeoutMs(Parameters p) {
    Integer ms = p.get(HANDSHAKE_TIMEOUT_KEY, Integer.class);
    return ms == null ? 10_000 : ms;
  }

  /**
   * Puts the Raft port's frame limit ({@link RaftFrameLimit}, {@code frameLimit} bytes) on every connection the server
   * accepts, behind TLS with a node certificate if {@code tls} is not null (before it starts).
   */
  static void guardAccepts(RaftServerRpc rpc, long frameLimit, TlsConfig tls, int handshakeTimeoutMs,
      RaftPortCounters counters) {
    NettyRpcService s = netty(rpc);
    Field f = field(NettyRpcService.class, "workerGroup");
    try {
      EventLoopGroup workers = (EventLoopGroup) f.get(s);
      f.set(s, new HookedEventLoopGroup(workers, ch -> {
        ch.pipeline().addFirst("eyrie-frame-limit", new RaftFrameLimit(frameLimit, counters));
        if (tls != null) {
          accept(ch, tls, handshakeTimeoutMs, counters);
        }
      }));
    } catch (IllegalAccessException e) {
      throw unreachable(f, e);
    }
  }

  /** Makes the server's connections to its peers TLS (once the server has its id, before it sends). */
  static void secureDials(RaftServerRpc rpc, RaftProperties properties, TlsConfig tls, int handshakeTimeoutMs) {
    secureProxies(netty(rpc).getProxies(), properties, tls, handshakeTimeoutMs);
  }

  /** Makes a Ratis client's connections TLS. */
  static void secureDials(RaftClientRpc rpc, RaftProperties properties, TlsConfig tls, int handshakeTimeoutMs) {
    if (!(rpc instanceof RaftClientRpcWithProxy<?> c)) {
      throw new IllegalStateException("TLS needs Ratis's Netty client RPC, not " + rpc.getClass().getName());
    }
    secureProxies(c.getProxies(), properties, tls, handshakeTimeoutMs);
  }

  private static NettyRpcService netty(RaftServerRpc rpc) {
    if (!(rpc instanceof NettyRpcService s)) {
      throw new IllegalStateException("TLS needs Ratis's Netty server RPC, not " + rpc.getClass().getName());
    }
    return s;
  }

  private static void secureProxies(PeerProxyMap<?> proxies, RaftProperties properties, TlsConfig tls,
      int handshakeTimeoutMs) {
    Field group = field(NettyRpcProxy.PeerMap.class, "group");
    Field create = field(PeerProxyMap.class, "createProxy");
    try {
      EventLoopGroup own = (EventLoopGroup) group.get(proxies);
      if (!(own instanceof NioEventLoopGroup)) {
        throw new IllegalStateException("TLS needs Ratis's Netty client on NIO, not " + own.getClass().getName());
      }
      EventLoopGroup hooked = new HookedEventLoopGroup(own,
          ch -> ch.pipeline().addFirst(HANDLER, new Dial(tls, handshakeTimeoutMs)));
      CheckedFunction<RaftPeer, NettyRpcProxy, IOException> dial = peer -> {
        try {
          return new NettyRpcProxy(peer, properties, hooked);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new InterruptedIOException("interrupted while connecting to " + peer);
        }
      };
      create.set(proxies, dial);
    } catch (IllegalAccessException e) {
      throw unreachable(create, e);
    }
  }

  private static Field field(Class<?> c, String name) {
    try {
      Field f = c.getDeclaredField(name);
      f.setAccessible(true);
      return f;
    } catch (NoSuchFieldException | RuntimeException e) {
      throw new IllegalStateException("cannot put TLS on Ratis's Netty RPC: no field " + c.getName() + "." + name
          + " (made for Ratis 3.3.0)", e);
    }
  }

  private static IllegalStateException unreachable(Field f, Exception e) {
    return new IllegalStateException("cannot put TLS on Ratis's Netty RPC: " + f + ": " + e.getMessage(), e);
  }

  /** Puts the server end of TLS first in an accepted channel, and the logging of its refusals. */
  private static void accept(Channel ch, TlsConfig tls, int handshakeTimeoutMs, RaftPortCounters counters) {
    SslHandler ssl = new SslHandler(tls.newPeerServerEngine());
    ssl.setHandshakeTimeoutMillis(handshakeTimeoutMs);
    ch.pipeline().addFirst(HANDLER, ssl);
    ch.pipeline().addAfter(HANDLER, "eyrie-tls-refusals", new Refusals(counters));
  }

  /**
   * Logs a refused handshake with the peer's address and why, and keeps its exception from
   * Ratis's handlers (which would log it again, at length); done once the handshake succeeds.
   */
  private static final class Refusals extends ChannelInboundHandlerAdapter {
    private final RaftPortCounters counters;
    private boolean failed;

    Refusals(RaftPortCounters counters) {
      this.counters = counters;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
      if (evt instanceof SslHandshakeCompletionEvent e) {
        if (e.isSuccess()) {
          ctx.pipeline().remove(this);
        } else {
          failed = true;
          counters.tlsRefusals.increment();
          refused(ctx, e.cause());
        }
      }
      super.userEventTriggered(ctx, evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      if (!failed) {
        failed = true;
        counters.tlsRefusals.increment();
        refused(ctx, cause);
      }
      ctx.close();
    }

    private static void refused(ChannelHandlerContext ctx, Throwable why) {
      WARNINGS.warn("raft-tls", "Raft port {}: refused {}: {}", ctx.channel().localAddress(),
          ctx.channel().remoteAddress(), Tls.explain(why));
      ctx.close();
    }
  }

  /** The client end of TLS: made on connect, when the host dialled is known. */
  private static final class Dial extends ChannelOutboundHandlerAdapter {
    private final TlsConfig tls;
    private final int handshakeTimeoutMs;

    Dial(TlsConfig tls, int handshakeTimeoutMs) {
      this.tls = tls;
      this.handshakeTimeoutMs = handshakeTimeoutMs;
    }

    @Override
    public void connect(ChannelHandlerContext ctx, SocketAddress remote, SocketAddress local, ChannelPromise promise) {
      InetSocketAddress a = (InetSocketAddress) remote;
      SslHandler ssl = new SslHandler(tls.newPeerClientEngine(a.getHostString(), a.getPort()));
      ssl.setHandshakeTimeoutMillis(handshakeTimeoutMs);
      ctx.pipeline().replace(this, HANDLER, ssl);
      ctx.connect(remote, local, promise);
    }
  }
}
