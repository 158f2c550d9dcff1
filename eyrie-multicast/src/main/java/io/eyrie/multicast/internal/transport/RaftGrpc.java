package io.eyrie.multicast.internal.transport;

import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Identity;
import io.eyrie.multicast.TlsConfig;
import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.X509ExtendedTrustManager;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.security.TlsConf;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslProvider;
import org.apache.ratis.util.SizeInBytes;
import org.slf4j.LoggerFactory;

/**
 * Ratis's gRPC transport on the Raft port ({@link io.eyrie.multicast.NodeOptions.RaftTransport#GRPC}), there to
 * be measured against Eyrie's Netty RPC ({@link EyrieNettyRpc}, the default).
 *
 * <ul>
 *   <li>One port per node: the gRPC server listens on the node's Raft port, and its admin and
 *       client services share that server (ratis-grpc opens separate servers only for an admin or
 *       client port that is set and differs from the server port; they are set to the same).
 *   <li>Message size: gRPC refuses a message larger than its maximum ({@link
 *       GrpcConfigKeys#setMessageSizeMax}, 64 MiB by default) before decoding it, which stands in
 *       for {@link RaftFrameLimit} (a Netty handler, which gRPC's pipeline does not have); it is
 *       set to the same limit ({@link RaftFrameLimit#forClientFrames}, at most 2 GiB - 1, gRPC's
 *       bound) so that large start entries and snapshot chunks pass as they do over Netty.
 *   <li>Mutual TLS: a {@link GrpcTlsConfig} for the server, admin and client ends with the node's
 *       certificate and key (read from its files by ratis-grpc's Netty) and a trust manager that
 *       takes only certificates with the role {@code node} signed by the node's CA ({@link
 *       Tls#onlyRole}), at both ends: a client certificate, or a plaintext peer, fails the handshake.
 * </ul>
 *
 * <p>What it does not have from {@link EyrieNettyRpc}: the frame limit's count ({@link
 * RaftPortCounters#frameRefusals}; gRPC refuses an oversized message itself, uncounted), the count
 * and log of handshakes refused for want of a certificate or in plaintext (only refused
 * certificates are counted and logged here, without the peer's address, which a trust manager is
 * not told), and the node's handshake timeout. It needs no call-id-0 serialization: gRPC matches
 * each reply to its own call (HTTP/2 stream).
 */
public final class RaftGrpc {
  private static final RateLimitedWarnings WARNINGS = new RateLimitedWarnings(LoggerFactory.getLogger(RaftGrpc.class));

  private RaftGrpc() {}

  /**
   * Sets a Ratis server's or client's properties for gRPC: the RPC type and the message size limit.
   *
   * @param p the properties
   * @param frameLimit the Raft port's frame limit ({@link RaftFrameLimit#forClientFrames})
   */
  static void configure(RaftProperties p, long frameLimit) {
    RaftConfigKeys.Rpc.setType(p, SupportedRpcType.GRPC);
    GrpcConfigKeys.setMessageSizeMax(p, SizeInBytes.valueOf(Math.min(frameLimit, Integer.MAX_VALUE)));
  }

  /** Sets a server's gRPC address: the node's Raft host and port, for every service. */
  static void configureServer(RaftProperties p, ClusterConfig.NodeInfo node) {
    GrpcConfigKeys.Server.setHost(p, node.host());
    GrpcConfigKeys.Server.setPort(p, node.raftPort());
    GrpcConfigKeys.Admin.setHost(p, node.host());
    GrpcConfigKeys.Admin.setPort(p, node.raftPort());
    GrpcConfigKeys.Client.setHost(p, node.host());
    GrpcConfigKeys.Client.setPort(p, node.raftPort());
  }

  /**
   * Puts a node's mutual TLS into gRPC's parameters (server, admin and client ends): only {@code node}
   * certificates are taken, at either end.
   *
   * @param p the parameters
   * @param tls the node's configuration (a node certificate)
   * @param counters where the server end counts the certificates it refuses
   * @throws IllegalArgumentException if it is not a node's
   */
  static void tls(Parameters p, TlsConfig tls, RaftPortCounters counters) {
    if (tls.identity().role() != Identity.Role.NODE) {
      throw new IllegalArgumentException(tls.certFile() + ": the Raft port needs a node certificate, not that of "
          + tls.identity());
    }
    GrpcTlsConfig conf;
    try {
      conf = GrpcTlsConfig.newBuilder()
          .setName("eyrie-raft-" + tls.identity())
          .setPrivateKey(new TlsConf.PrivateKeyConf(tls.keyFile().toFile()))
          .setKeyCertificates(new TlsConf.CertificatesConf(tls.certFile().toFile()))
          .setTrustManager(new Counted(tls, counters))
          .setMutualTls(true)
          .setSslProvider(SslProvider.JDK)
          .setProtocols(Tls.PROTOCOLS)
          .build();
    } catch (SSLException e) {
      throw new IllegalArgumentException(tls.caFile() + ": cannot trust it for the Raft port: " + e.getMessage(), e);
    }
    GrpcConfigKeys.Server.setTlsConf(p, conf);
    GrpcConfigKeys.Admin.setTlsConf(p, conf);
    GrpcConfigKeys.Client.setTlsConf(p, conf);
  }

  /**
   * The node-role trust manager, counting the client certificates it refuses at the server end in
   * the node's {@link RaftPortCounters} (and logging them, rate-limited, as {@link RaftTls} does).
   * A peer without a certificate or in plaintext never reaches it, so on gRPC those are not counted.
   */
  private static final class Counted extends X509ExtendedTrustManager {
    private final X509ExtendedTrustManager inner;
    private final RaftPortCounters counters;

    /** Trusts {@code node} certificates signed by one of the node's CAs, counting refusals in {@code counters}. */
    Counted(TlsConfig tls, RaftPortCounters counters) throws SSLException {
      this.inner = Tls.onlyRole(tls.trustedCertificates(), Identity.Role.NODE);
      this.counters = counters;
    }

    /** A check of the inner trust manager. */
    private interface Check {
      void run() throws CertificateException;
    }

    /** Runs a client-certificate check, counting and logging a refusal. */
    private void counted(Check check) throws CertificateException {
      try {
        check.run();
      } catch (CertificateException e) {
        counters.tlsRefusals.increment();
        WARNINGS.warn("raft-grpc-tls", "Raft port (gRPC): refused a peer's certificate: {}", e.getMessage());
        throw e;
      }
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
      counted(() -> inner.checkClientTrusted(chain, authType));
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      counted(() -> inner.checkClientTrusted(chain, authType, socket));
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      counted(() -> inner.checkClientTrusted(chain, authType, engine));
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
      inner.checkServerTrusted(chain, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      inner.checkServerTrusted(chain, authType, socket);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      inner.checkServerTrusted(chain, authType, engine);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return inner.getAcceptedIssuers();
    }
  }
}
