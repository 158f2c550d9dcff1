package io.eyrie.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.Identity;
import io.eyrie.multicast.TlsConfig;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.ssl.SslProvider;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real TLS handshakes over loopback, with certificates {@code eyrie certs} wrote and a tiny Netty
 * server and client: the server is node 1 with {@link TlsConfig#newServerEngine()}, greets a
 * peer whose handshake succeeds with the identity it read from the peer's certificate, and
 * records why a handshake failed. Mutual TLS works for a client, an admin and a node, over
 * TLSv1.3 and TLSv1.2; a client without a certificate, with one from another CA, with an expired
 * one, or speaking plaintext is refused, each with its own reason.
 */
@Timeout(60)
class CertsHandshakeTest {
  private static final long WAIT_S = 10;

  @TempDir
  static Path tmp;
  private static Path dir;
  private static Path otherDir;
  private static EventLoopGroup group;
  private static TlsConfig node1;

  @BeforeAll
  static void certificatesAndLoop() throws Exception {
    dir = tmp.resolve("cluster");
    otherDir = tmp.resolve("other");
    certs("--out", dir.toString(), "--nodes", "1,2", "--admin", "ops", "--client", "app", "--hosts", "eyrie-a.test");
    certs("--out", otherDir.toString(), "--client", "app");
    // An expired client of the cluster's own CA: the same code path, its validity over 399 days ago.
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream ps = new PrintStream(out, true, StandardCharsets.UTF_8);
    int code = new CertsCommand().run(Args.parse(List.of("--out", dir.toString(), "--client", "old", "--days", "1"),
        new CertsCommand().valued(), new CertsCommand().switches()), ps, ps, Instant.now().minus(Duration.ofDays(400)));
    assertEquals(0, code, out.toString(StandardCharsets.UTF_8));
    node1 = TlsConfig.fromDir(dir, "node-1");
    group = new NioEventLoopGroup(2);
  }

  @AfterAll
  static void stop() {
    if (group != null) {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
  }

  private static void certs(String... args) {
    String[] r = CertsCommandTest.run(java.util.stream.Stream.concat(java.util.stream.Stream.of("certs"),
        java.util.stream.Stream.of(args)).toArray(String[]::new));
    assertEquals("0", r[0], r[1] + r[2]);
  }

  @Test
  @Timeout(30)
  void aClientsCertificateGivesAMutualTlsHandshakeAndTheServerSeesItsIdentityAndRole() throws Exception {
    try (Server s = new Server(node1)) {
      Client c = s.dial(TlsConfig.fromDir(dir, "client-app").newClientEngine("localhost", s.port()));
      assertEquals(new Identity("app", Identity.Role.CLIENT), s.identity.get(WAIT_S, TimeUnit.SECONDS));
      assertEquals("hello app (client)", c.reply.get(WAIT_S, TimeUnit.SECONDS));
      assertEquals(new Identity("node-1", Identity.Role.NODE), Identity.ofPeer(c.session()),
          "the client sees the node's identity");
      assertEquals("TLSv1.3", c.session().getProtocol());
    }
  }

  @Test
  @Timeout(30)
  void anAdminAndANodeAreSeenWithTheirRolesAndANodeMayBeDialledAtAHostItsCertificateNames() throws Exception {
    try (Server s = new Server(node1)) {
      Client c = s.dial(TlsConfig.fromDir(dir, "admin-ops").newClientEngine("127.0.0.1", s.port()));
      assertEquals("hello ops (admin)", c.reply.get(WAIT_S, TimeUnit.SECONDS));
    }
    try (Server s = new Server(node1)) {
      Client c = s.dial(TlsConfig.fromDir(dir, "node-2").newClientEngine("eyrie-a.test", s.port()));
      assertEquals("hello node-2 (node)", c.reply.get(WAIT_S, TimeUnit.SECONDS));
    }
    // A host the node's certificate does not name: the client refuses the server.
    try (Server s = new Server(node1)) {
      Client c = s.dial(TlsConfig.fromDir(dir, "node-2").newClientEngine("eyrie-b.test", s.port()));
      String why = TlsConfig.explain(c.failure.get(WAIT_S, TimeUnit.SECONDS));
      assertTrue(why.contains("does not name the host"), why);
      c.closed.get(WAIT_S, TimeUnit.SECONDS);
      assertFalse(c.reply.isDone());
    }
  }

  @Test
  @Timeout(30)
  void tls12IsAcceptedAndTheKeyFilesAreReadableByNettysOwnPemReader() throws Exception {
    SSLEngine engine = SslContextBuilder.forClient().sslProvider(SslProvider.JDK).protocols("TLSv1.2")
        .keyManager(dir.resolve("client-app.pem").toFile(), dir.resolve("client-app-key.pem").toFile())
        .trustManager(dir.resolve("ca.pem").toFile()).build()
        .newEngine(io.netty.buffer.ByteBufAllocator.DEFAULT, "localhost", 0);
    try (Server s = new Server(node1)) {
      Client c = s.dial(engine);
      assertEquals("hello app (client)", c.reply.get(WAIT_S, TimeUnit.SECONDS));
      assertEquals("TLSv1.2", c.session().getProtocol());
    }
  }

  @Test
  @Timeout(30)
  void aClientWithoutACertificateIsRefused() throws Exception {
    SSLEngine engine = SslContextBuilder.forClient().sslProvider(SslProvider.JDK)
        .trustManager(node1.trustedCertificates()).build()
        .newEngine(io.netty.buffer.ByteBufAllocator.DEFAULT, "localhost", 0);
    assertRefused(engine, "no client certificate");
  }

  @Test
  @Timeout(30)
  void aClientWhoseCertificateComesFromAnotherCaIsRefused() throws Exception {
    // It trusts the cluster's CA, but its own certificate is signed by another. The JDK's client
    // does not even offer it: the server's request names the CAs it accepts.
    TlsConfig stranger = TlsConfig.of(dir.resolve("ca.pem"), otherDir.resolve("client-app.pem"),
        otherDir.resolve("client-app-key.pem"));
    assertEquals("app", stranger.identity().name(), "same name, other CA");
    assertRefused(stranger.newClientEngine("localhost", 0), "no client certificate");
    // A client that presents it all the same (as other TLS stacks do) is refused for its CA.
    assertRefused(insistingClient(otherDir, "client-app"), "not signed by a trusted CA");
  }

  /** A client engine that presents its certificate whatever CAs the server asks for. */
  private static SSLEngine insistingClient(Path from, String name) throws Exception {
    X509Certificate cert;
    PrivateKey key;
    try (PEMParser p = new PEMParser(Files.newBufferedReader(from.resolve(name + ".pem")))) {
      cert = new JcaX509CertificateConverter().getCertificate((X509CertificateHolder) p.readObject());
    }
    try (PEMParser p = new PEMParser(Files.newBufferedReader(from.resolve(name + "-key.pem")))) {
      key = new JcaPEMKeyConverter().getPrivateKey((PrivateKeyInfo) p.readObject());
    }
    X509ExtendedKeyManager insisting = new X509ExtendedKeyManager() {
      @Override
      public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
        return "me";
      }

      @Override
      public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
        return "me";
      }

      @Override
      public X509Certificate[] getCertificateChain(String alias) {
        return new X509Certificate[] {cert};
      }

      @Override
      public PrivateKey getPrivateKey(String alias) {
        return key;
      }

      @Override
      public String[] getClientAliases(String keyType, Principal[] issuers) {
        return new String[] {"me"};
      }

      @Override
      public String[] getServerAliases(String keyType, Principal[] issuers) {
        return null;
      }

      @Override
      public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
        return null;
      }
    };
    return SslContextBuilder.forClient().sslProvider(SslProvider.JDK).keyManager(insisting)
        .trustManager(node1.trustedCertificates()).build()
        .newEngine(io.netty.buffer.ByteBufAllocator.DEFAULT, "localhost", 0);
  }

  @Test
  @Timeout(30)
  void anExpiredClientCertificateIsRefused() throws Exception {
    TlsConfig old = TlsConfig.fromDir(dir, "client-old");
    assertTrue(old.certificate().getNotAfter().toInstant().isBefore(Instant.now().minus(Duration.ofDays(398))),
        "expired: " + old.certificate().getNotAfter());
    assertRefused(old.newClientEngine("localhost", 0), "has expired");
  }

  @Test
  @Timeout(30)
  void aPlaintextClientIsRefused() throws Exception {
    try (Server s = new Server(node1)) {
      Client c = s.dial(null);
      c.channel.writeAndFlush(Unpooled.copiedBuffer("hello, plaintext\n", StandardCharsets.US_ASCII));
      String why = TlsConfig.explain(s.failure.get(WAIT_S, TimeUnit.SECONDS));
      assertTrue(why.startsWith("not TLS"), why);
      c.closed.get(WAIT_S, TimeUnit.SECONDS);
      assertFalse(c.reply.isDone(), "no greeting for a plaintext peer");
      assertFalse(s.identity.isDone());
    }
  }

  /** The server refuses the handshake, says why, and closes; the client gets no greeting. */
  private static void assertRefused(SSLEngine engine, String reason) throws Exception {
    try (Server s = new Server(node1)) {
      Client c = s.dial(engine);
      String why = TlsConfig.explain(s.failure.get(WAIT_S, TimeUnit.SECONDS));
      assertTrue(why.contains(reason), "the server's reason: " + why);
      c.closed.get(WAIT_S, TimeUnit.SECONDS);
      assertFalse(c.reply.isDone(), "no greeting for a refused peer");
      assertFalse(s.identity.isDone(), "no identity for a refused peer");
      // The client learns it was refused: from the server's alert.
      String clientWhy = TlsConfig.explain(c.failure.get(WAIT_S, TimeUnit.SECONDS));
      assertTrue(clientWhy.contains("refused") || clientWhy.contains(reason), "the client's reason: " + clientWhy);
    }
  }

  /** A one-connection TLS server: greets a peer with its identity, or records the failure. */
  private static final class Server implements AutoCloseable {
    final CompletableFuture<Identity> identity = new CompletableFuture<>();
    final CompletableFuture<Throwable> failure = new CompletableFuture<>();
    private final Channel channel;

    Server(TlsConfig tls) throws InterruptedException {
      channel = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
          .childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
              SslHandler ssl = new SslHandler(tls.newServerEngine());
              ch.pipeline().addLast(ssl, new ChannelInboundHandlerAdapter() {
                @Override
                public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
                  if (evt instanceof SslHandshakeCompletionEvent e) {
                    if (e.isSuccess()) {
                      Identity id = Identity.ofPeer(ssl.engine().getSession());
                      identity.complete(id);
                      ctx.writeAndFlush(Unpooled.copiedBuffer("hello " + id + "\n", StandardCharsets.UTF_8));
                    } else {
                      failure.complete(e.cause());
                      ctx.close();
                    }
                  }
                  super.userEventTriggered(ctx, evt);
                }

                @Override
                public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                  failure.complete(cause);
                  ctx.close();
                }
              });
            }
          }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
    }

    int port() {
      return ((InetSocketAddress) channel.localAddress()).getPort();
    }

    /** Dials the server with the engine, or in plaintext if it is null. */
    Client dial(SSLEngine engine) throws InterruptedException {
      Client c = new Client(engine);
      c.channel = new Bootstrap().group(group).channel(NioSocketChannel.class)
          .handler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
              if (engine != null) {
                ch.pipeline().addLast(new SslHandler(engine));
              }
              ch.pipeline().addLast(c.handler());
            }
          }).connect(channel.localAddress()).sync().channel();
      return c;
    }

    @Override
    public void close() {
      channel.close().syncUninterruptibly();
    }
  }

  /** One client connection: the line the server sent, the failure it saw, its closing. */
  private static final class Client {
    final CompletableFuture<String> reply = new CompletableFuture<>();
    final CompletableFuture<Throwable> failure = new CompletableFuture<>();
    final CompletableFuture<Void> closed = new CompletableFuture<>();
    private final SSLEngine engine;
    private final StringBuilder text = new StringBuilder();
    Channel channel;

    Client(SSLEngine engine) {
      this.engine = engine;
    }

    javax.net.ssl.SSLSession session() {
      return engine.getSession();
    }

    ChannelInboundHandlerAdapter handler() {
      return new ChannelInboundHandlerAdapter() {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
          ByteBuf b = (ByteBuf) msg;
          try {
            text.append(b.toString(StandardCharsets.UTF_8));
          } finally {
            b.release();
          }
          int nl = text.indexOf("\n");
          if (nl >= 0) {
            reply.complete(text.substring(0, nl));
          }
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
          if (evt instanceof SslHandshakeCompletionEvent e && !e.isSuccess()) {
            failure.complete(e.cause());
          }
          super.userEventTriggered(ctx, evt);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
          failure.complete(cause);
          ctx.close();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
          closed.complete(null);
          super.channelInactive(ctx);
        }
      };
    }
  }

  /** The roles a certificate can name, as the command writes them. */
  @Test
  @Timeout(10)
  void everyRoleHasTheLabelTheCertificatesCarry() {
    assertEquals(Set.of("node", "admin", "client"),
        Set.of(Identity.Role.NODE.label(), Identity.Role.ADMIN.label(), Identity.Role.CLIENT.label()));
    assertEquals(Identity.Role.ADMIN, Identity.Role.ofLabel("Admin"));
  }
}
