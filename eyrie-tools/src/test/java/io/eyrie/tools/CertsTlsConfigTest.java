package io.eyrie.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.Identity;
import io.eyrie.multicast.TlsConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link TlsConfig} refuses bad files when it is made, in one line naming the file: a missing
 * file, a file that is not the PEM it should be, a key that is not the certificate's, and a
 * certificate that names no Eyrie identity (the files are those {@code eyrie certs} wrote,
 * mixed up).
 */
@Timeout(60)
class CertsTlsConfigTest {
  @TempDir
  static Path dir;

  @BeforeAll
  static void certificates() {
    String[] r = CertsCommandTest.run("certs", "--out", dir.toString(), "--nodes", "1,2", "--client", "app");
    assertEquals("0", r[0], r[2]);
  }

  private static Path f(String name) {
    return dir.resolve(name);
  }

  /** The configuration fails with one line that names {@code file} and says {@code what}. */
  private static void refused(Supplier<TlsConfig> make, Path file, String what) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, make::get);
    assertTrue(e.getMessage().startsWith(file.toString()), "names " + file + ": " + e.getMessage());
    assertTrue(e.getMessage().contains(what), e.getMessage());
    assertEquals(1, e.getMessage().lines().count(), "one line: " + e.getMessage());
  }

  @Test
  @Timeout(10)
  void theFilesTheCommandWroteMakeAConfiguration() {
    TlsConfig c = TlsConfig.of(f("ca.pem"), f("node-2.pem"), f("node-2-key.pem"));
    assertEquals(new Identity("node-2", Identity.Role.NODE), c.identity());
    assertEquals(f("node-2-key.pem"), c.keyFile());
    assertTrue(c.newServerEngine().getNeedClientAuth(), "a server requires a client certificate");
    assertEquals(java.util.List.of("TLSv1.3", "TLSv1.2"), java.util.List.of(c.newServerEngine().getEnabledProtocols()));
    assertTrue(c.newClientEngine("localhost", 1).getUseClientMode());
  }

  @Test
  @Timeout(10)
  void missingFilesAreNamed() {
    refused(() -> TlsConfig.of(f("nope.pem"), f("node-1.pem"), f("node-1-key.pem")), f("nope.pem"),
        "no such CA certificate file");
    refused(() -> TlsConfig.fromDir(dir, "node-9"), f("node-9.pem"), "no such certificate file");
    refused(() -> TlsConfig.of(f("ca.pem"), f("node-1.pem"), f("none-key.pem")), f("none-key.pem"),
        "no such private key file");
  }

  @Test
  @Timeout(10)
  void filesOfTheWrongKindAreNamed() throws Exception {
    // A key where the certificate should be, and the other way round.
    refused(() -> TlsConfig.of(f("ca.pem"), f("node-1-key.pem"), f("node-1-key.pem")), f("node-1-key.pem"),
        "not a PEM certificate");
    refused(() -> TlsConfig.of(f("node-1-key.pem"), f("node-1.pem"), f("node-1-key.pem")), f("node-1-key.pem"),
        "not a PEM CA certificate");
    refused(() -> TlsConfig.of(f("ca.pem"), f("node-1.pem"), f("node-1.pem")), f("node-1.pem"),
        "not a PEM PKCS#8 private key");
    // PEM armour around garbage.
    Path broken = f("broken.pem");
    Files.writeString(broken, "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n");
    refused(() -> TlsConfig.of(f("ca.pem"), broken, f("node-1-key.pem")), broken, "not a valid PEM certificate");
    Path brokenKey = f("broken-key.pem");
    Files.writeString(brokenKey, "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n");
    refused(() -> TlsConfig.of(f("ca.pem"), f("node-1.pem"), brokenKey), brokenKey, "not a valid EC private key");
  }

  @Test
  @Timeout(10)
  void aKeyThatIsNotTheCertificatesIsRefused() {
    refused(() -> TlsConfig.of(f("ca.pem"), f("node-1.pem"), f("node-2-key.pem")), f("node-2-key.pem"),
        "does not belong to the certificate CN=node-1,OU=node,O=Eyrie");
    refused(() -> TlsConfig.of(f("ca.pem"), f("client-app.pem"), f("ca-key.pem")), f("ca-key.pem"),
        "does not belong");
  }

  @Test
  @Timeout(10)
  void aCertificateWithoutAnEyrieIdentityIsRefused() {
    // The CA's own certificate and key: they match, but the subject has no role.
    refused(() -> TlsConfig.of(f("ca.pem"), f("ca.pem"), f("ca-key.pem")), f("ca.pem"),
        "has no single role in its OU (one of node, admin, client)");
  }
}
