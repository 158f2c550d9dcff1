package io.eyrie.tools;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.Identity;
import io.eyrie.multicast.TlsConfig;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code eyrie certs} through its command line: the files it writes and what their certificates
 * say (identity and role, host names, key usages, validity), the usage text, and what it refuses:
 * replacing a CA or an identity's files without {@code --force}. Adding a client later reuses the
 * CA in the directory.
 */
@Timeout(60)
class CertsCommandTest {

  /** Runs {@code eyrie ARGS}: exit code, standard output, standard error. */
  static String[] run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = EyrieMain.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new String[] {String.valueOf(code), out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8)};
  }

  @Test
  @Timeout(30)
  void helpDescribesTheCommandAndTheOverviewListsIt() {
    String[] help = run("certs", "--help");
    assertEquals("0", help[0], help[2]);
    for (String s : List.of("usage: eyrie certs --out DIR", "--nodes", "--admin", "--client", "--hosts", "--days",
        "--new-ca", "--force", "CN=NAME, OU=ROLE", "ca.pem")) {
      assertTrue(help[1].contains(s), "the usage mentions " + s + ":\n" + help[1]);
    }
    String[] overview = run("--help");
    assertTrue(overview[1].matches("(?s).*\\n  certs\\s+writes a development CA.*"), overview[1]);
    String[] noOut = run("certs", "--nodes", "1");
    assertEquals("2", noOut[0]);
    assertTrue(noOut[2].contains("option --out is required"), noOut[2]);
    String[] badName = run("certs", "--out", "x", "--client", "a b");
    assertEquals("2", badName[0]);
    assertTrue(badName[2].contains("invalid client name 'a b'"), badName[2]);
    String[] badDays = run("certs", "--out", "x", "--client", "app", "--days", "0");
    assertEquals("2", badDays[0]);
    assertTrue(badDays[2].contains("option --days must be between 1 and 36500, got 0"), badDays[2]);
    String[] badHost = run("certs", "--out", "x", "--nodes", "1", "--hosts", "no_such host");
    assertEquals("2", badHost[0]);
    assertTrue(badHost[2].contains("invalid host 'no_such host'"), badHost[2]);
    String[] empty = run("certs", "--out", "x", "--nodes", "1,,2");
    assertEquals("2", empty[0]);
    assertTrue(empty[2].contains("option --nodes has an empty item"), empty[2]);
  }

  @Test
  @Timeout(30)
  void writesACaAndACertificatePerIdentityThatNameItsRole(@TempDir Path tmp) throws Exception {
    Path dir = tmp.resolve("certs");
    String[] r = run("certs", "--out", dir.toString(), "--nodes", "1,2,3", "--admin", "ops", "--client", "app",
        "--hosts", "eyrie-a.test,10.1.2.3", "--days", "30");
    assertEquals("0", r[0], r[2]);
    Set<String> files = new TreeSet<>();
    try (var s = Files.list(dir)) {
      s.forEach(p -> files.add(p.getFileName().toString()));
    }
    assertEquals(new TreeSet<>(List.of("ca.pem", "ca-key.pem", "node-1.pem", "node-1-key.pem", "node-2.pem",
        "node-2-key.pem", "node-3.pem", "node-3-key.pem", "admin-ops.pem", "admin-ops-key.pem", "client-app.pem",
        "client-app-key.pem")), files);
    assertTrue(r[1].contains("a new development CA"), r[1]);
    assertTrue(Files.readString(dir.resolve("node-1-key.pem")).startsWith("-----BEGIN PRIVATE KEY-----"),
        "PKCS#8 PEM");
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("ca-key.pem"))));
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("client-app-key.pem"))));

    TlsConfig node = TlsConfig.fromDir(dir, "node-1");
    X509Certificate ca = node.trustedCertificates().get(0);
    assertTrue(ca.getBasicConstraints() >= 0, "ca.pem is a CA");
    X509Certificate n = node.certificate();
    assertEquals(new Identity("node-1", Identity.Role.NODE), node.identity());
    assertEquals(ca.getSubjectX500Principal(), n.getIssuerX500Principal());
    n.verify(ca.getPublicKey());
    assertEquals(List.of("1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2"), n.getExtendedKeyUsage(), "serverAuth, clientAuth");
    assertEquals(List.of("localhost", "127.0.0.1", "eyrie-a.test", "10.1.2.3"), sans(n.getSubjectAlternativeNames()));
    long days = Duration.between(n.getNotBefore().toInstant(), n.getNotAfter().toInstant()).toDays();
    assertEquals(30, days - Certs.SKEW.toDays(), "valid 30 days (and " + Certs.SKEW + " before now)");
    assertTrue(n.getNotBefore().toInstant().isBefore(Instant.now()));
    assertEquals(-1, n.getBasicConstraints(), "a node cannot sign certificates");

    TlsConfig admin = TlsConfig.fromDir(dir, "admin-ops");
    assertEquals(new Identity("ops", Identity.Role.ADMIN), admin.identity());
    assertEquals(List.of("1.3.6.1.5.5.7.3.2"), admin.certificate().getExtendedKeyUsage(), "clientAuth only");
    TlsConfig client = TlsConfig.fromDir(dir, "client-app");
    assertEquals(new Identity("app", Identity.Role.CLIENT), client.identity());
    assertEquals("CN=app,OU=client,O=Eyrie", client.certificate().getSubjectX500Principal().getName());
    assertEquals(List.of("1.3.6.1.5.5.7.3.2"), client.certificate().getExtendedKeyUsage());
    client.certificate().verify(ca.getPublicKey());
  }

  @Test
  @Timeout(30)
  void refusesToReplaceACaWithoutForceAndReusesItToAddAClient(@TempDir Path dir) throws Exception {
    String d = dir.toString();
    assertEquals("0", run("certs", "--out", d, "--nodes", "1")[0]);
    byte[] ca = Files.readAllBytes(dir.resolve("ca.pem"));
    byte[] caKey = Files.readAllBytes(dir.resolve("ca-key.pem"));

    String[] newCa = run("certs", "--out", d, "--new-ca", "--client", "app");
    assertEquals("1", newCa[0], newCa[1] + newCa[2]);
    assertTrue(newCa[2].contains("has a CA already (ca.pem); --force replaces it"), newCa[2]);
    assertArrayEquals(ca, Files.readAllBytes(dir.resolve("ca.pem")), "the CA is untouched");
    assertArrayEquals(caKey, Files.readAllBytes(dir.resolve("ca-key.pem")));
    assertFalse(Files.exists(dir.resolve("client-app.pem")), "a refused run writes nothing");

    String[] again = run("certs", "--out", d, "--nodes", "1");
    assertEquals("1", again[0]);
    assertTrue(again[2].contains("node-1.pem exists; --force replaces it"), again[2]);
    String[] nothing = run("certs", "--out", d);
    assertEquals("1", nothing[0]);
    assertTrue(nothing[2].contains("nothing to do"), nothing[2]);

    // Adding a client later: the CA in the directory signs it, and stays as it was.
    String[] add = run("certs", "--out", d, "--client", "app");
    assertEquals("0", add[0], add[2]);
    assertTrue(add[1].contains("the CA of"), add[1]);
    assertArrayEquals(ca, Files.readAllBytes(dir.resolve("ca.pem")));
    TlsConfig client = TlsConfig.fromDir(dir, "client-app");
    client.certificate().verify(client.trustedCertificates().get(0).getPublicKey());

    // A CA without its key cannot sign.
    Files.move(dir.resolve("ca-key.pem"), dir.resolve("elsewhere.pem"));
    String[] noKey = run("certs", "--out", d, "--client", "later");
    assertEquals("1", noKey[0]);
    assertTrue(noKey[2].contains("ca.pem without ca-key.pem"), noKey[2]);
    Files.move(dir.resolve("elsewhere.pem"), dir.resolve("ca-key.pem"));

    // --new-ca --force replaces it: a new key, a new name.
    String[] forced = run("certs", "--out", d, "--new-ca", "--force", "--nodes", "1");
    assertEquals("0", forced[0], forced[2]);
    assertFalse(java.util.Arrays.equals(caKey, Files.readAllBytes(dir.resolve("ca-key.pem"))));
    TlsConfig node = TlsConfig.fromDir(dir, "node-1");
    assertNotEquals(client.trustedCertificates().get(0).getSubjectX500Principal(),
        node.trustedCertificates().get(0).getSubjectX500Principal());
    node.certificate().verify(node.trustedCertificates().get(0).getPublicKey());
  }

  private static List<String> sans(Collection<List<?>> names) {
    List<String> out = new ArrayList<>();
    for (List<?> n : names) {
      out.add(String.valueOf(n.get(1)));
    }
    return out;
  }
}
