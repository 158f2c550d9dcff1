package io.eyrie.multicast.internal.transport;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.security.PrivateKey;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.SSLException;

/**
 * Netty's TLS contexts for mutual TLS, from key material already read and checked (the API
 * package's {@code TlsConfig} reads the PEM files): the JDK's provider, TLSv1.3 and TLSv1.2, a
 * server that requires a client certificate signed by the trusted CA, and a client that checks
 * the server's certificate names the host it dialled. Also the one-line reason of a failed
 * handshake, for refusals and logs.
 */
public final class Tls {
  /** The protocols offered, newest first. */
  public static final List<String> PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");

  private Tls() {}

  /**
   * Builds the context of a server that requires a client certificate.
   *
   * @param key the server's private key
   * @param chain its certificate chain, its own first
   * @param trusted the CA certificates a client's certificate must chain to
   * @return the context
   * @throws SSLException if the JDK's provider refuses the material
   */
  public static SslContext server(PrivateKey key, List<X509Certificate> chain, List<X509Certificate> trusted)
      throws SSLException {
    return SslContextBuilder.forServer(key, chain)
        .trustManager(trusted)
        .clientAuth(ClientAuth.REQUIRE)
        .sslProvider(SslProvider.JDK)
        .protocols(PROTOCOLS)
        .build();
  }

  /**
   * Builds the context of a client that presents its certificate and checks the server's,
   * including that it names the host the client dialled (its DNS or IP subject alternative
   * names).
   *
   * @param key the client's private key
   * @param chain its certificate chain, its own first
   * @param trusted the CA certificates a server's certificate must chain to
   * @return the context
   * @throws SSLException if the JDK's provider refuses the material
   */
  public static SslContext client(PrivateKey key, List<X509Certificate> chain, List<X509Certificate> trusted)
      throws SSLException {
    return SslContextBuilder.forClient()
        .keyManager(key, chain)
        .trustManager(trusted)
        .endpointIdentificationAlgorithm("HTTPS")
        .sslProvider(SslProvider.JDK)
        .protocols(PROTOCOLS)
        .build();
  }

  /**
   * Says in one line why a TLS handshake failed, from the exception either side saw: no client
   * certificate, a certificate from an untrusted CA, an expired one, a plaintext peer, or the
   * alert the peer sent.
   *
   * @param failure what the handshake failed with
   * @return the reason, one line
   */
  public static String explain(Throwable failure) {
    String alert = null;
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      String m = t.getMessage() == null ? "" : t.getMessage();
      if (t instanceof NotSslRecordException) {
        return "not TLS: the peer sent plaintext to a TLS port";
      }
      if (t instanceof CertificateExpiredException) {
        return "the certificate has expired (" + m + ")";
      }
      if (t instanceof CertificateNotYetValidException) {
        return "the certificate is not yet valid (" + m + ")";
      }
      if (m.contains("Empty client certificate chain") || m.contains("certificate_required")
          || m.contains("peer not authenticated")) {
        return "no client certificate: mutual TLS requires one signed by the cluster's CA";
      }
      if (m.contains("unable to find valid certification path") || m.contains("Path does not chain")
          || m.contains("signature check failed") || m.contains("unknown_ca")) {
        return "the certificate is not signed by a trusted CA";
      }
      if (m.contains("certificate_expired")) {
        return "the certificate has expired";
      }
      if (m.contains("No subject alternative") || m.contains("No name matching")) {
        return "the server's certificate does not name the host dialled (" + m + ")";
      }
      if (alert == null && m.startsWith("Received fatal alert")) {
        alert = m;
      }
    }
    if (alert != null) {
      return "the peer refused the handshake: " + alert;
    }
    String m = failure.getMessage();
    return failure.getClass().getSimpleName() + (m == null ? "" : ": " + m.lines().findFirst().orElse(""));
  }
}
