package io.eyrie.multicast;

import io.eyrie.multicast.internal.transport.Tls;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslContext;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Mutual TLS for one process: the CA it trusts, its certificate and its private key, PEM files
 * (as {@code eyrie certs} writes them). Every connection's two ends present a certificate signed
 * by the CA, and each learns the other's {@link Identity} from it.
 *
 * <p>The files are read and checked when the configuration is made: a missing or unreadable
 * file, a file that is not the PEM it should be, or a key that does not belong to the
 * certificate fails at once with a one-line {@link IllegalArgumentException} naming the file.
 *
 * <p>Both ends use the JDK's TLS provider with TLSv1.3 and TLSv1.2. A server ({@link
 * #newServerEngine()}) requires a client certificate; a client ({@link #newClientEngine(String,
 * int)}) checks that the server's certificate names the host it dialled.
 *
 * <p>A certificate that has expired, or is not valid yet, is logged as a warning, not refused:
 * the peers refuse it.
 *
 * <p>A node's client port takes it ({@link NodeOptions.Builder#tls}), and so do its clients
 * ({@link MulticastClient.Builder#tls}). A node's configuration also secures its Raft port and
 * the Ratis connections it opens ({@link #newPeerServerEngine()}, {@link
 * #newPeerClientEngine(String, int)}): both ends there must present a {@code node} certificate.
 */
public final class TlsConfig {
  private static final Logger LOG = LoggerFactory.getLogger(TlsConfig.class);
  private static final String KEY_BEGIN = "-----BEGIN PRIVATE KEY-----";
  private static final String KEY_END = "-----END PRIVATE KEY-----";

  private final Path caFile;
  private final Path certFile;
  private final Path keyFile;
  private final List<X509Certificate> trusted;
  private final List<X509Certificate> chain;
  private final Identity identity;
  private final SslContext server;
  private final SslContext client;
  private final SslContext peerServer;
  private final SslContext peerClient;

  private TlsConfig(Path caFile, Path certFile, Path keyFile) {
    this.caFile = Objects.requireNonNull(caFile, "caFile");
    this.certFile = Objects.requireNonNull(certFile, "certFile");
    this.keyFile = Objects.requireNonNull(keyFile, "keyFile");
    this.trusted = readCertificates(caFile, "CA certificate");
    this.chain = readCertificates(certFile, "certificate");
    PrivateKey key = readKey(keyFile, chain.get(0));
    try {
      this.identity = Identity.of(chain.get(0));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(certFile + ": " + e.getMessage(), e);
    }
    try {
      chain.get(0).checkValidity();
    } catch (java.security.cert.CertificateExpiredException | java.security.cert.CertificateNotYetValidException e) {
      // Not refused here (a peer decides), but every peer will refuse it: say so once.
      LOG.warn("{}: the certificate of {} is not valid now ({}); peers will refuse it", certFile, identity,
          e.getMessage());
    }
    try {
      this.server = Tls.server(key, chain, trusted);
      this.client = Tls.client(key, chain, trusted);
      boolean node = identity.role() == Identity.Role.NODE;
      this.peerServer = node ? Tls.server(key, chain, trusted, Identity.Role.NODE) : null;
      this.peerClient = node ? Tls.client(key, chain, trusted, Identity.Role.NODE) : null;
    } catch (SSLException e) {
      throw new IllegalArgumentException(certFile + " and " + keyFile + ": TLS refuses them: " + e.getMessage(), e);
    }
  }

  /**
   * Reads and checks a configuration.
   *
   * @param caFile the PEM certificate(s) of the CA to trust
   * @param certFile this process's PEM certificate (chain), its own first
   * @param keyFile its PEM PKCS#8 private key ({@code BEGIN PRIVATE KEY}), unencrypted
   * @return the configuration
   * @throws IllegalArgumentException naming the file that is missing or wrong
   */
  public static TlsConfig of(Path caFile, Path certFile, Path keyFile) {
    return new TlsConfig(caFile, certFile, keyFile);
  }

  /**
   * Reads the files {@code eyrie certs} wrote for one identity: {@code DIR/ca.pem}, {@code
   * DIR/NAME.pem} and {@code DIR/NAME-key.pem}.
   *
   * @param dir the directory {@code eyrie certs --out} wrote
   * @param name the files' name: {@code node-1} for node 1, {@code admin-ops} for the admin
   *     {@code ops}, {@code client-app} for the client {@code app}
   * @return the configuration
   * @throws IllegalArgumentException naming the file that is missing or wrong
   */
  public static TlsConfig fromDir(Path dir, String name) {
    return of(dir.resolve("ca.pem"), dir.resolve(name + ".pem"), dir.resolve(name + "-key.pem"));
  }

  /** Returns the file of the trusted CA certificate(s). */
  public Path caFile() {
    return caFile;
  }

  /** Returns the file of this process's certificate. */
  public Path certFile() {
    return certFile;
  }

  /** Returns the file of this process's private key. */
  public Path keyFile() {
    return keyFile;
  }

  /** Returns this process's identity, as its certificate names it. */
  public Identity identity() {
    return identity;
  }

  /** Returns this process's certificate. */
  public X509Certificate certificate() {
    return chain.get(0);
  }

  /** Returns the CA certificates a peer's certificate must chain to. */
  public List<X509Certificate> trustedCertificates() {
    return trusted;
  }

  /**
   * Returns a new engine for the server end of one connection: it presents this certificate and
   * requires the client's, signed by the trusted CA.
   *
   * @return the engine, in server mode
   */
  public SSLEngine newServerEngine() {
    return server.newEngine(ByteBufAllocator.DEFAULT);
  }

  /**
   * Returns a new engine for the client end of one connection to {@code host}: it presents this
   * certificate and requires the server's, signed by the trusted CA and naming {@code host}.
   *
   * @param host the host dialled, as the server's certificate names it (DNS name or IP address)
   * @param port the port dialled
   * @return the engine, in client mode
   */
  public SSLEngine newClientEngine(String host, int port) {
    return client.newEngine(ByteBufAllocator.DEFAULT, Objects.requireNonNull(host, "host"), port);
  }

  /**
   * Returns a new engine for the server end of a Raft connection from another node: as {@link
   * #newServerEngine()}, and it also refuses, at the handshake, a client whose certificate does
   * not have the role {@code node}.
   *
   * @return the engine, in server mode
   * @throws IllegalStateException if this is not a node's certificate
   */
  public SSLEngine newPeerServerEngine() {
    return peerContext(peerServer).newEngine(ByteBufAllocator.DEFAULT);
  }

  /**
   * Returns a new engine for the client end of a Raft connection to the node at {@code host}: as
   * {@link #newClientEngine(String, int)}, and it also refuses a server whose certificate does
   * not have the role {@code node}.
   *
   * @param host the host dialled, as the server's certificate names it (DNS name or IP address)
   * @param port the port dialled
   * @return the engine, in client mode
   * @throws IllegalStateException if this is not a node's certificate
   */
  public SSLEngine newPeerClientEngine(String host, int port) {
    return peerContext(peerClient).newEngine(ByteBufAllocator.DEFAULT, Objects.requireNonNull(host, "host"), port);
  }

  private SslContext peerContext(SslContext c) {
    if (c == null) {
      throw new IllegalStateException(certFile + ": the Raft port needs a node certificate, not that of " + identity);
    }
    return c;
  }

  /** Returns the Netty context of a server end (for the endpoints of this module). */
  SslContext serverContext() {
    return server;
  }

  /** Returns the Netty context of a client end (for the endpoints of this module). */
  SslContext clientContext() {
    return client;
  }

  /**
   * Says in one line why a TLS handshake failed, from what either end saw: no client
   * certificate, a certificate from a CA not trusted, an expired certificate, a plaintext peer,
   * or the alert the peer sent.
   *
   * @param failure the exception the handshake failed with
   * @return the reason
   */
  public static String explain(Throwable failure) {
    return Tls.explain(failure);
  }

  @Override
  public String toString() {
    return "TlsConfig[" + identity + ", ca " + caFile + ", cert " + certFile + "]";
  }

  private static byte[] read(Path file, String what) {
    try {
      return Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      throw new IllegalArgumentException(file + ": no such " + what + " file");
    } catch (IOException e) {
      throw new IllegalArgumentException(file + ": cannot read the " + what + " file: " + e);
    }
  }

  private static List<X509Certificate> readCertificates(Path file, String what) {
    byte[] bytes = read(file, what);
    if (!new String(bytes, StandardCharsets.US_ASCII).contains("-----BEGIN CERTIFICATE-----")) {
      throw new IllegalArgumentException(file + ": not a PEM " + what + " (no BEGIN CERTIFICATE)");
    }
    List<X509Certificate> certs = new ArrayList<>();
    try {
      for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(bytes))) {
        certs.add((X509Certificate) c);
      }
    } catch (CertificateException | RuntimeException e) {
      throw new IllegalArgumentException(file + ": not a valid PEM " + what + ": " + oneLine(e));
    }
    if (certs.isEmpty()) {
      throw new IllegalArgumentException(file + ": no " + what + " in the file");
    }
    return List.copyOf(certs);
  }

  private static PrivateKey readKey(Path file, X509Certificate cert) {
    String text = new String(read(file, "private key"), StandardCharsets.US_ASCII);
    int begin = text.indexOf(KEY_BEGIN);
    int end = text.indexOf(KEY_END);
    if (begin < 0 || end < begin) {
      throw new IllegalArgumentException(file + ": not a PEM PKCS#8 private key (no BEGIN PRIVATE KEY"
          + (text.contains("ENCRYPTED PRIVATE KEY") ? "; an encrypted key is not supported" : "") + ")");
    }
    PrivateKey key;
    try {
      byte[] der = Base64.getMimeDecoder().decode(text.substring(begin + KEY_BEGIN.length(), end));
      String algorithm = cert.getPublicKey().getAlgorithm();
      key = KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      throw new IllegalArgumentException(file + ": not a valid " + cert.getPublicKey().getAlgorithm()
          + " private key: " + oneLine(e));
    }
    if (!matches(key, cert)) {
      throw new IllegalArgumentException(file + ": the private key does not belong to the certificate "
          + cert.getSubjectX500Principal().getName());
    }
    return key;
  }

  /** Signs a random challenge with the key and checks it with the certificate's public key. */
  private static boolean matches(PrivateKey key, X509Certificate cert) {
    String algorithm = switch (key.getAlgorithm()) {
      case "EC" -> "SHA256withECDSA";
      case "RSA" -> "SHA256withRSA";
      case "Ed25519", "EdDSA" -> "Ed25519";
      case "Ed448" -> "Ed448";
      default -> null;
    };
    if (algorithm == null) {
      return true; // an algorithm this check does not know: the handshake will tell
    }
    try {
      byte[] challenge = new byte[32];
      new SecureRandom().nextBytes(challenge);
      Signature s = Signature.getInstance(algorithm);
      s.initSign(key);
      s.update(challenge);
      byte[] signature = s.sign();
      Signature v = Signature.getInstance(algorithm);
      v.initVerify(cert.getPublicKey());
      v.update(challenge);
      return v.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  private static String oneLine(Exception e) {
    String m = e.getMessage();
    return m == null ? e.getClass().getSimpleName() : m.lines().findFirst().orElse("");
  }
}
