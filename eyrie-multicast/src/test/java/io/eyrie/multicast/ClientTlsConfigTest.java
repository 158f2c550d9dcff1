package io.eyrie.multicast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The configuration side of the client port's TLS: the cluster file's {@code tls DIR} line, the
 * order of the roles, and a node that refuses to start without TLS off loopback. (Handshakes and
 * refusals over real connections: eyrie-tools' {@code ClientTlsTest}, which has the certificates.)
 */
@Timeout(30)
class ClientTlsConfigTest {
  private static final String NODES = "node 1 127.0.0.1 raft=7101 client=7201\ngroup p0 partition 1\n";

  @Test
  void theTlsLineIsReadOnceAndARelativeDirectoryIsTheClusterFilesNeighbour(@TempDir Path dir) throws Exception {
    assertNull(ClusterConfig.parse(NODES).tlsDir(), "plaintext without the line");
    ClusterConfig c = ClusterConfig.parse("tls /etc/eyrie/certs\n" + NODES);
    assertEquals(Path.of("/etc/eyrie/certs"), c.tlsDir());
    assertEquals(c, ClusterConfig.parse(c.toText()), "the text form keeps it");
    assertEquals(c.tlsDir(), c.withGroup(new ClusterConfig.GroupInfo(GroupId.valueOf("p1"),
        ClusterConfig.Kind.PARTITION, List.of(1))).tlsDir(), "an added group keeps it");
    IllegalArgumentException twice = assertThrows(IllegalArgumentException.class,
        () -> ClusterConfig.parse("tls a\ntls b\n" + NODES));
    assertTrue(twice.getMessage().contains("line 2") && twice.getMessage().contains("second tls line"),
        twice.getMessage());

    Path file = dir.resolve("conf/cluster.conf");
    Files.createDirectories(file.getParent());
    Files.writeString(file, "tls certs\n" + NODES);
    assertEquals(dir.resolve("conf/certs").toAbsolutePath(), ClusterConfig.load(file).tlsDir());
    IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
        () -> ClusterConfig.load(file).tls("node-1"));
    assertTrue(missing.getMessage().contains("ca.pem"), "names the missing file: " + missing.getMessage());
  }

  @Test
  void aNodeMayDoWhatAnAdminMayAndAnAdminWhatAClientMay() {
    for (Identity.Role needed : Identity.Role.values()) {
      assertTrue(Identity.Role.NODE.covers(needed), "node covers " + needed);
    }
    assertTrue(Identity.Role.ADMIN.covers(Identity.Role.ADMIN));
    assertTrue(Identity.Role.ADMIN.covers(Identity.Role.CLIENT));
    assertFalse(Identity.Role.ADMIN.covers(Identity.Role.NODE));
    assertTrue(Identity.Role.CLIENT.covers(Identity.Role.CLIENT));
    assertTrue(Identity.Role.CLIENT.covers(null), "null stands for client");
    assertFalse(Identity.Role.CLIENT.covers(Identity.Role.ADMIN));
    assertFalse(Identity.Role.CLIENT.covers(Identity.Role.NODE));
  }

  @Test
  void anIdentitysClientIdTagIsTheFirstFourBytesOfTheSha256OfRoleAndName() {
    // sha256("client:app") = 0417fab2..., sha256("admin:app") = 90556cfe...: fixed, since every
    // node and every client library must compute the same tag.
    Identity app = new Identity("app", Identity.Role.CLIENT);
    assertEquals(0x0417fab2, app.clientIdTag());
    assertEquals(0x90556cfe, new Identity("app", Identity.Role.ADMIN).clientIdTag(), "the role is in the hash");
    assertTrue(app.mayUseClientId(0x0417fab2_00000001L) && app.mayUseClientId(0x0417fab2_ffffffffL));
    assertFalse(app.mayUseClientId(0x90556cfe_00000001L), "not the admin's of the same name");
    assertFalse(app.mayUseClientId(0x0000_0001_0417_fab2L), "the tag is the top bits");
    assertTrue(new Identity("node-1", Identity.Role.NODE).mayUseClientId(0x90556cfe_00000001L), "a node may use any");
  }

  @Test
  void aNodeOffLoopbackStartsOnlyWithTlsOrInsecure(@TempDir Path dir) {
    // 192.0.2.1 is TEST-NET-1: not loopback. The check comes before anything binds.
    ClusterConfig off = ClusterConfig.parse("node 1 192.0.2.1 raft=7101 client=7201\ngroup p0 partition 1\n");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Node.start(off, 1,
        dir.resolve("n1"), new EchoDeliverers(), NodeOptions.defaults()));
    assertTrue(e.getMessage().contains("not loopback") && e.getMessage().contains("--insecure")
        && e.getMessage().contains("tls DIR"), e.getMessage());
    assertEquals(1, e.getMessage().lines().count(), "one line");
    assertTrue(Node.isLoopback("127.0.0.1") && Node.isLoopback("localhost") && Node.isLoopback("::1"));
    assertFalse(Node.isLoopback("192.0.2.1"));
    assertFalse(Node.isLoopback("0.0.0.0"), "the wildcard address listens on every interface");
  }
}
