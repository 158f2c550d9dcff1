package io.eyrie.tools;

import io.eyrie.multicast.Identity;
import java.io.IOException;
import java.io.Reader;
import java.io.StringWriter;
import java.io.Writer;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * What {@code eyrie certs} does: a development CA and the certificates of a cluster's
 * identities, PEM files in one directory, through BouncyCastle's PKIX API and the JDK's keys
 * (EC P-256, SHA256withECDSA).
 *
 * <p>A certificate's subject is {@code CN=<name>, OU=<role>, O=Eyrie}: the name is the identity
 * and the OU its role ({@code node}, {@code admin}, {@code client}), which {@link
 * Identity#of(X509Certificate)} reads back. A node's certificate names {@code localhost},
 * {@code 127.0.0.1} and the hosts given as subject alternative names and may serve and dial
 * (serverAuth and clientAuth); an admin's or a client's may only dial (clientAuth).
 *
 * <p>The files: {@code ca.pem} and {@code ca-key.pem}; {@code node-N.pem} and {@code
 * node-N-key.pem}; {@code admin-NAME.pem}, {@code client-NAME.pem} and their {@code -key.pem}.
 * Keys are unencrypted PKCS#8 ({@code BEGIN PRIVATE KEY}), readable by their owner only.
 */
final class Certs {
  static final String CA_FILE = "ca.pem";
  static final String CA_KEY_FILE = "ca-key.pem";
  /** How far back a certificate's validity starts, for clocks a little behind this one. */
  static final Duration SKEW = Duration.ofHours(1);
  /** A new CA's shortest life, so that identities added later still fit in it. */
  static final Duration CA_MIN_LIFE = Duration.ofDays(3650);
  private static final Pattern DNS =
      Pattern.compile("[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*");
  private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");
  private static final SecureRandom RANDOM = new SecureRandom();

  private Certs() {}

  /** One certificate to issue. */
  record Request(Identity.Role role, String name) {
    Request {
      Objects.requireNonNull(role, "role");
      if (!Identity.validName(name)) {
        throw new IllegalArgumentException("invalid " + role.label() + " name '" + name
            + "' (1 to 64 characters from A-Z a-z 0-9 . _ -)");
      }
    }

    /** Node {@code 1}: CN {@code node-1}; admin {@code ops}: CN {@code ops}. */
    static Request node(String id) {
      return new Request(Identity.Role.NODE, "node-" + id);
    }

    /** The files' name: {@code node-1}, {@code admin-ops}, {@code client-app}. */
    String stem() {
      return role == Identity.Role.NODE ? name : role.label() + "-" + name;
    }
  }

  /**
   * What to do.
   *
   * @param dir the directory to write into (made if missing)
   * @param requests the identities to issue
   * @param hosts the extra DNS names or IP addresses of node certificates
   * @param days how long the issued certificates are valid
   * @param newCa make a new CA even if the directory has one (which then needs {@code force})
   * @param force replace existing files
   * @param start when the certificates' validity starts (less {@link #SKEW}): now, or in the
   *     past for tests of expired certificates
   */
  record Plan(Path dir, List<Request> requests, List<String> hosts, int days, boolean newCa, boolean force,
      Instant start) {
    Plan {
      requests = List.copyOf(requests);
      hosts = List.copyOf(hosts);
      if (days < 1) {
        throw new IllegalArgumentException("days must be at least 1, got " + days);
      }
      for (String h : hosts) {
        if (!IPV4.matcher(h).matches() && !h.contains(":") && !DNS.matcher(h).matches()) {
          throw new IllegalArgumentException("invalid host '" + h + "': a DNS name or an IP address");
        }
      }
    }
  }

  /** A certificate and its key, as issued or as read from the directory. */
  record Issued(X509Certificate certificate, PrivateKey key) {}

  /** Something in the directory stops the plan; the message says what and how to go on. */
  static final class RefusedException extends Exception {
    private static final long serialVersionUID = 1L;

    RefusedException(String message) {
      super(message);
    }
  }

  /**
   * Carries out a plan: checks first that nothing would be overwritten without {@code force},
   * then makes or reads the CA and writes each identity's certificate and key.
   *
   * @param plan what to do
   * @return the files written, in order
   * @throws RefusedException if the directory's files stop the plan (nothing is written then)
   * @throws IOException if a file cannot be read or written
   * @throws GeneralSecurityException if a key cannot be made or a certificate signed
   */
  static List<Path> write(Plan plan) throws RefusedException, IOException, GeneralSecurityException {
    Path dir = plan.dir();
    Path caFile = dir.resolve(CA_FILE);
    Path caKeyFile = dir.resolve(CA_KEY_FILE);
    boolean haveCa = Files.exists(caFile);
    boolean haveCaKey = Files.exists(caKeyFile);
    boolean makeCa = plan.newCa() || !haveCa && !haveCaKey;
    if (makeCa && (haveCa || haveCaKey) && !plan.force()) {
      throw new RefusedException(dir + " has a CA already (" + (haveCa ? CA_FILE : CA_KEY_FILE)
          + "); --force replaces it, and every certificate it signed stops being trusted");
    }
    if (!makeCa && haveCa != haveCaKey) {
      throw new RefusedException(dir + " has " + (haveCa ? CA_FILE + " without " + CA_KEY_FILE : CA_KEY_FILE
          + " without " + CA_FILE) + ", so it cannot sign; --new-ca --force makes a new CA");
    }
    if (!makeCa && plan.requests().isEmpty()) {
      throw new RefusedException("nothing to do: " + dir + " has a CA; name identities with --nodes, --admin or --client");
    }
    Set<String> stems = new LinkedHashSet<>();
    for (Request r : plan.requests()) {
      if (!stems.add(r.stem())) {
        throw new RefusedException(r.stem() + " is asked for twice");
      }
      for (Path f : List.of(certFile(dir, r), keyFile(dir, r))) {
        if (Files.exists(f) && !plan.force()) {
          throw new RefusedException(f + " exists; --force replaces it");
        }
      }
    }

    Files.createDirectories(dir);
    List<Path> written = new ArrayList<>();
    Instant notBefore = plan.start().minus(SKEW);
    Issued ca;
    if (makeCa) {
      Duration life = Duration.ofDays(plan.days()).compareTo(CA_MIN_LIFE) > 0 ? Duration.ofDays(plan.days()) : CA_MIN_LIFE;
      ca = newCa(notBefore, plan.start().plus(life));
      writePem(caKeyFile, ca.key(), true, plan.force());
      writePem(caFile, ca.certificate(), false, plan.force());
      written.add(caFile);
      written.add(caKeyFile);
    } else {
      ca = readCa(caFile, caKeyFile);
    }
    Instant notAfter = plan.start().plus(Duration.ofDays(plan.days()));
    for (Request r : plan.requests()) {
      Issued leaf = issue(ca, r, plan.hosts(), notBefore, notAfter);
      writePem(keyFile(dir, r), leaf.key(), true, plan.force());
      writePem(certFile(dir, r), leaf.certificate(), false, plan.force());
      written.add(certFile(dir, r));
      written.add(keyFile(dir, r));
    }
    return written;
  }

  static Path certFile(Path dir, Request r) {
    return dir.resolve(r.stem() + ".pem");
  }

  static Path keyFile(Path dir, Request r) {
    return dir.resolve(r.stem() + "-key.pem");
  }

  private static KeyPair newKeyPair() throws GeneralSecurityException {
    KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
    g.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
    return g.generateKeyPair();
  }

  private static Issued newCa(Instant notBefore, Instant notAfter) throws GeneralSecurityException {
    KeyPair kp = newKeyPair();
    byte[] tag = new byte[4];
    RANDOM.nextBytes(tag);
    // A name of its own, so that two development CAs never pass for each other.
    X500Name name = new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.O, "Eyrie")
        .addRDN(BCStyle.CN, "Eyrie development CA " + HexFormat.of().formatHex(tag)).build();
    JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
    try {
      X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(name, serial(), java.util.Date.from(notBefore),
          java.util.Date.from(notAfter), name, kp.getPublic())
          .addExtension(Extension.basicConstraints, true, new BasicConstraints(0))
          .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
          .addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(kp.getPublic()));
      return new Issued(sign(b, kp.getPrivate()), kp.getPrivate());
    } catch (IOException e) {
      throw new GeneralSecurityException("cannot build the CA certificate: " + e.getMessage(), e);
    }
  }

  private static Issued issue(Issued ca, Request r, List<String> hosts, Instant notBefore, Instant notAfter)
      throws GeneralSecurityException {
    KeyPair kp = newKeyPair();
    X500Name subject = new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.O, "Eyrie")
        .addRDN(BCStyle.OU, r.role().label()).addRDN(BCStyle.CN, r.name()).build();
    JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
    try {
      X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(ca.certificate(), serial(),
          java.util.Date.from(notBefore), java.util.Date.from(notAfter), jca(subject), kp.getPublic())
          .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
          .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
          .addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(kp.getPublic()))
          .addExtension(Extension.authorityKeyIdentifier, false, ext.createAuthorityKeyIdentifier(ca.certificate()));
      if (r.role() == Identity.Role.NODE) {
        b.addExtension(Extension.extendedKeyUsage, false,
            new ExtendedKeyUsage(new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
        Set<String> names = new LinkedHashSet<>(List.of("localhost", "127.0.0.1"));
        names.addAll(hosts);
        List<GeneralName> sans = new ArrayList<>();
        for (String h : names) {
          boolean ip = IPV4.matcher(h).matches() || h.contains(":");
          sans.add(new GeneralName(ip ? GeneralName.iPAddress : GeneralName.dNSName, h));
        }
        b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(sans.toArray(new GeneralName[0])));
      } else {
        b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_clientAuth));
      }
      return new Issued(sign(b, ca.key()), kp.getPrivate());
    } catch (IOException e) {
      throw new GeneralSecurityException("cannot build the certificate of " + r.stem() + ": " + e.getMessage(), e);
    }
  }

  private static javax.security.auth.x500.X500Principal jca(X500Name name) throws IOException {
    return new javax.security.auth.x500.X500Principal(name.getEncoded());
  }

  private static BigInteger serial() {
    return new BigInteger(127, RANDOM).add(BigInteger.ONE);
  }

  private static X509Certificate sign(X509v3CertificateBuilder b, PrivateKey key) throws GeneralSecurityException {
    try {
      X509CertificateHolder holder = b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(key));
      return new JcaX509CertificateConverter().getCertificate(holder);
    } catch (OperatorCreationException e) {
      throw new GeneralSecurityException("cannot sign: " + e.getMessage(), e);
    }
  }

  /** Reads the directory's CA and checks that its key is its own and that it may sign. */
  static Issued readCa(Path caFile, Path caKeyFile) throws RefusedException, IOException {
    Object cert = readPem(caFile);
    if (!(cert instanceof X509CertificateHolder holder)) {
      throw new RefusedException(caFile + ": not a PEM certificate");
    }
    Object key = readPem(caKeyFile);
    if (!(key instanceof PrivateKeyInfo info)) {
      throw new RefusedException(caKeyFile + ": not a PEM PKCS#8 private key");
    }
    try {
      X509Certificate c = new JcaX509CertificateConverter().getCertificate(holder);
      PrivateKey k = new JcaPEMKeyConverter().getPrivateKey(info);
      if (c.getBasicConstraints() < 0) {
        throw new RefusedException(caFile + ": not a CA certificate");
      }
      if (!belongs(k, c.getPublicKey())) {
        throw new RefusedException(caKeyFile + ": not the key of " + caFile);
      }
      return new Issued(c, k);
    } catch (GeneralSecurityException e) {
      throw new RefusedException(caFile + " and " + caKeyFile + ": unreadable: " + e.getMessage());
    }
  }

  private static boolean belongs(PrivateKey key, PublicKey pub) {
    try {
      String alg = key.getAlgorithm().equals("EC") ? "SHA256withECDSA" : "SHA256with" + key.getAlgorithm();
      byte[] data = new byte[32];
      RANDOM.nextBytes(data);
      Signature s = Signature.getInstance(alg);
      s.initSign(key);
      s.update(data);
      byte[] sig = s.sign();
      Signature v = Signature.getInstance(alg);
      v.initVerify(pub);
      v.update(data);
      return v.verify(sig);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  private static Object readPem(Path file) throws IOException {
    try (Reader r = Files.newBufferedReader(file, StandardCharsets.US_ASCII); PEMParser p = new PEMParser(r)) {
      return p.readObject();
    }
  }

  /** Writes a PEM file through a temporary file beside it; a key readable by its owner only. */
  private static void writePem(Path file, Object what, boolean secret, boolean replace) throws IOException {
    StringWriter text = new StringWriter();
    try (JcaPEMWriter w = new JcaPEMWriter(text)) {
      w.writeObject(what instanceof PrivateKey k ? new JcaPKCS8Generator(k, null) : what);
    }
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.deleteIfExists(tmp);
    if (secret && file.getFileSystem().supportedFileAttributeViews().contains("posix")) {
      Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    } else {
      Files.createFile(tmp);
    }
    try (Writer w = Files.newBufferedWriter(tmp, StandardCharsets.US_ASCII)) {
      w.write(text.toString());
    }
    if (!replace && Files.exists(file)) {
      Files.delete(tmp);
      throw new FileAlreadyExistsException(file.toString());
    }
    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }
}
