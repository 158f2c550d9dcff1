package io.eyrie.multicast.internal.transport;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.eyrie.multicast.Identity;
import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * Netty's TLS contexts for mutual TLS, from key material already read and checked (the API
 * package's {@code TlsConfig} reads the PEM files): the JDK's provider, TLSv1.3 and TLSv1.2, a
 * server that requires a client certificate signed by the trusted CA, and a client that checks
 * the server's certificate names the host it dialled. Also the one-line reason of a failed
 * handshake, for refusals and logs. Contexts for the Raft port also refuse, at the handshake, a
 * peer whose certificate does not have the role {@code node} ({@link #onlyRole}).
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
    return server(key, chain, trusted, null);
  }

  /**
   * Builds the context of a server that requires a client certificate and, unless {@code role} is
   * null, one with that role ({@link #onlyRole}).
   *
   * @param key the server's private key
   * @param chain its certificate chain, its own first
   * @param trusted the CA certificates a client's certificate must chain to
   * @param role the only role a client may have, or null for any
   * @return the context
   * @throws SSLException if the JDK's provider refuses the material
   */
  public static SslContext server(PrivateKey key, List<X509Certificate> chain, List<X509Certificate> trusted,
      Identity.Role role) throws SSLException {
    SslContextBuilder b = SslContextBuilder.forServer(key, chain);
    return (role == null ? b.trustManager(trusted) : b.trustManager(onlyRole(trusted, role)))
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
    return client(key, chain, trusted, null);
  }

  /**
   * Builds the context of a client as {@link #client(PrivateKey, List, List)} does that, unless
   * {@code role} is null, also requires the server's certificate to have that role.
   *
   * @param key the client's private key
   * @param chain its certificate chain, its own first
   * @param trusted the CA certificates a server's certificate must chain to
   * @param role the only role the server may have, or null for any
   * @return the context
   * @throws SSLException if the JDK's provider refuses the material
   */
  public static SslContext client(PrivateKey key, List<X509Certificate> chain, List<X509Certificate> trusted,
      Identity.Role role) throws SSLException {
    SslContextBuilder b = SslContextBuilder.forClient().keyManager(key, chain);
    return (role == null ? b.trustManager(trusted) : b.trustManager(onlyRole(trusted, role)))
        .endpointIdentificationAlgorithm("HTTPS")
        .sslProvider(SslProvider.JDK)
        .protocols(PROTOCOLS)
        .build();
  }

  /**
   * A trust manager that checks a peer's chain as the JDK's PKIX one does (against {@code
   * trusted}, and the host name where the engine asks for it), then refuses a certificate whose
   * {@link Identity} does not have {@code role}: the handshake fails with an alert naming why.
   *
   * @param trusted the CA certificates a peer's certificate must chain to
   * @param role the only role a peer may have
   * @return the trust manager
   * @throws SSLException if the JDK cannot build its trust manager from the certificates
   */
  public static X509ExtendedTrustManager onlyRole(List<X509Certificate> trusted, Identity.Role role)
      throws SSLException {
    X509ExtendedTrustManager pkix;
    try {
      KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      for (int i = 0; i < trusted.size(); i++) {
        store.setCertificateEntry("ca-" + i, trusted.get(i));
      }
      TrustManagerFactory f = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      f.init(store);
      pkix = null;
      for (TrustManager t : f.getTrustManagers()) {
        if (t instanceof X509ExtendedTrustManager x) {
          pkix = x;
        }
      }
    } catch (GeneralSecurityException | java.io.IOException e) {
      throw new SSLException("cannot build a trust manager: " + e.getMessage(), e);
    }
    if (pkix == null) {
      throw new SSLException("the JDK has no X509ExtendedTrustManager");
    }
    return new RoleTrustManager(pkix, role);
  }

  /** The JDK's checks, then the role of the peer's certificate. */
  private static final class RoleTrustManager extends X509ExtendedTrustManager {
    private final X509ExtendedTrustManager pkix;
    private final Identity.Role role;

    RoleTrustManager(X509ExtendedTrustManager pkix, Identity.Role role) {
      this.pkix = pkix;
      this.role = role;
    }

    private void checkRole(X509Certificate[] chain) throws CertificateException {
      Identity id;
      try {
        id = Identity.of(chain);
      } catch (IllegalArgumentException e) {
        throw new CertificateException("no identity: " + e.getMessage(), e);
      }
      if (id.role() != role) {
        throw new CertificateException("identity " + id + " refused: only " + role.label() + " certificates are taken");
      }
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
      pkix.checkClientTrusted(chain, authType);
      checkRole(chain);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      pkix.checkClientTrusted(chain, authType, socket);
      checkRole(chain);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      pkix.checkClientTrusted(chain, authType, engine);
      checkRole(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
      pkix.checkServerTrusted(chain, authType);
      checkRole(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      pkix.checkServerTrusted(chain, authType, socket);
      checkRole(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      pkix.checkServerTrusted(chain, authType, engine);
      checkRole(chain);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return pkix.getAcceptedIssuers();
    }
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
      // Also the shaded copy of Ratis's Netty, on the Raft port.
      if (t instanceof NotSslRecordException || t.getClass().getSimpleName().equals("NotSslRecordException")) {
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
