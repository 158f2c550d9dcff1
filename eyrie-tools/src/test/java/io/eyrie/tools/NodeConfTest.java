package io.eyrie.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.NodeOptions;
import io.eyrie.multicast.NodeOptions.RaftTransport;
import io.eyrie.tools.NodeConf.Source;
import io.eyrie.tools.NodeConfigKeys.Key;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Owns the unit tests of the node configuration file ({@link NodeConf}, {@link NodeConfigKeys}):
 * unknown keys and bad values are refused in one line, the file overrides the defaults and a
 * flag the file, and {@code conf/node.properties} lists exactly the known keys, their defaults
 * and their descriptions.
 */
class NodeConfTest {
  private static final Pattern SETTING = Pattern.compile("^#([a-z][a-z.]*[a-z]) =(?: (.*))?$");

  @Test
  @Timeout(30)
  void unknownKeyIsRefusedInOneLineNamingTheClosestKey(@TempDir Path dir) throws Exception {
    Path f = write(dir, "raft.election.timeout.mn.ms = 700\n");
    Args.UsageException e = assertThrows(Args.UsageException.class, () -> NodeConf.read(f));
    assertTrue(e.getMessage().contains("unknown key 'raft.election.timeout.mn.ms'"), e.getMessage());
    assertTrue(e.getMessage().contains("did you mean 'raft.election.timeout.min.ms'"), e.getMessage());
    assertFalse(e.getMessage().contains("\n"), e.getMessage());
    Path far = write(dir, "colour = blue\n");
    Args.UsageException e2 = assertThrows(Args.UsageException.class, () -> NodeConf.read(far));
    assertTrue(e2.getMessage().endsWith("unknown key 'colour'"), e2.getMessage());
    assertNull(NodeConfigKeys.closest("colour"));
  }

  @Test
  @Timeout(30)
  void badValueIsRefusedNamingKeyAndValue(@TempDir Path dir) throws Exception {
    for (String line : List.of("client.connections.max = lots", "client.connections.max = 0",
        "tls.insecure = yes", "metrics.port = 70000", "raft.transport = http", "raft.election.timeout.min.ms = 50")) {
      Path f = write(dir, line + "\n");
      Args.UsageException e = assertThrows(Args.UsageException.class, () -> NodeConf.read(f), line);
      String key = line.substring(0, line.indexOf(' '));
      String value = line.substring(line.indexOf("= ") + 2);
      assertTrue(e.getMessage().contains("bad value for " + key + ": '" + value + "'"), e.getMessage());
      assertFalse(e.getMessage().contains("\n"), e.getMessage());
    }
    // A pair that does not fit together is refused when the options are built.
    Path cluster = cluster(dir);
    Path f = write(dir, "raft.election.timeout.min.ms = 900\nraft.election.timeout.max.ms = 800\n");
    NodeConf c = NodeConf.resolve(args("--cluster", cluster.toString(), "--id", "1", "--conf", f.toString()), "d/");
    Args.UsageException e = assertThrows(Args.UsageException.class, () -> c.options(NodeOptions.defaults()));
    assertTrue(e.getMessage().contains("bad value for raft.election.timeout.max.ms: '800'"), e.getMessage());
    Path half = write(dir, "tls.ca.file = ca.pem\n");
    NodeConf h = NodeConf.resolve(args("--cluster", cluster.toString(), "--id", "1", "--conf", half.toString()), "d/");
    assertThrows(Args.UsageException.class, () -> h.options(NodeOptions.defaults()));
  }

  @Test
  @Timeout(30)
  void fileOverridesDefaultAndFlagOverridesFile(@TempDir Path dir) throws Exception {
    Path cluster = cluster(dir);
    Path f = write(dir, "raft.snapshot.threshold = 500\nclient.expiry.ms = 60000\nmetrics.port = 9200\n"
        + "data.dir = store\n");
    NodeConf fileOnly = NodeConf.resolve(args("--cluster", cluster.toString(), "--id", "1", "--conf", f.toString()),
        "data/node-");
    Map<Key, NodeConf.Setting> s = fileOnly.settings();
    assertEquals(new NodeConf.Setting("500", Source.CONF_FILE), s.get(NodeConfigKeys.SNAPSHOT_THRESHOLD));
    assertEquals(new NodeConf.Setting("600", Source.DEFAULT), s.get(NodeConfigKeys.ELECTION_TIMEOUT_MIN));
    assertEquals(9200, fileOnly.metricsPort());
    assertEquals(dir.resolve("store").toAbsolutePath().normalize(), fileOnly.dataDir());
    NodeOptions o = fileOnly.options(NodeOptions.defaults());
    assertEquals(500, o.snapshotThreshold());
    assertEquals(60_000, o.clientExpiryMs());
    assertEquals(NodeOptions.MAX_FRAME_BYTES_DEFAULT, o.maxFrameBytes());
    assertFalse(o.insecure());

    Path data = dir.resolve("flagged");
    NodeConf flagged = NodeConf.resolve(args("--cluster", cluster.toString(), "--id", "1", "--conf", f.toString(),
        "--metrics-port", "9300", "--storage", data.toString(), "--insecure"), "data/node-");
    assertEquals(9300, flagged.metricsPort());
    assertEquals(Source.FLAG, flagged.settings().get(NodeConfigKeys.METRICS_PORT).source());
    assertEquals(data.toAbsolutePath().normalize(), flagged.dataDir());
    assertTrue(flagged.options(NodeOptions.defaults()).insecure());

    // Without the file: the cluster file's metrics=P, the launcher's storage prefix.
    NodeConf plain = NodeConf.resolve(args("--cluster", cluster.toString(), "--id", "1"), "data/node-");
    assertEquals(new NodeConf.Setting("9100", Source.CLUSTER_FILE), plain.settings().get(NodeConfigKeys.METRICS_PORT));
    assertEquals(Path.of("data/node-1").toAbsolutePath().normalize(), plain.dataDir());
  }

  @Test
  @Timeout(30)
  void raftTransportIsNettyByDefaultGrpcFromTheFileAndTheFlagWins(@TempDir Path dir) throws Exception {
    Path cluster = cluster(dir);
    NodeConf plain = NodeConf.resolve(args("--cluster", cluster.toString(), "--id", "1"), "d/");
    assertEquals(new NodeConf.Setting("netty", Source.DEFAULT), plain.settings().get(NodeConfigKeys.RAFT_TRANSPORT));
    assertEquals(RaftTransport.NETTY, plain.options(NodeOptions.defaults()).raftTransport());
    Path f = write(dir, "raft.transport = GRPC\n");
    NodeConf file = NodeConf.resolve(args("--cluster", cluster.toString(), "--id", "1", "--conf", f.toString()), "d/");
    assertEquals(new NodeConf.Setting("GRPC", Source.CONF_FILE), file.settings().get(NodeConfigKeys.RAFT_TRANSPORT));
    assertEquals(RaftTransport.GRPC, file.options(NodeOptions.defaults()).raftTransport());
    NodeConf flagged = NodeConf.resolve(args("--cluster", cluster.toString(), "--id", "1", "--conf", f.toString(),
        "--raft-transport", "netty"), "d/");
    assertEquals(Source.FLAG, flagged.settings().get(NodeConfigKeys.RAFT_TRANSPORT).source());
    assertEquals(RaftTransport.NETTY, flagged.options(NodeOptions.defaults()).raftTransport());
    Args.UsageException e = assertThrows(Args.UsageException.class, () -> NodeConf.resolve(args("--cluster",
        cluster.toString(), "--id", "1", "--raft-transport", "quic"), "d/"));
    assertTrue(e.getMessage().contains("bad value for --raft-transport: 'quic'"), e.getMessage());
    assertTrue(e.getMessage().contains("netty or grpc"), e.getMessage());
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    file.print(new java.io.PrintStream(out, true, java.nio.charset.StandardCharsets.UTF_8));
    assertTrue(out.toString(java.nio.charset.StandardCharsets.UTF_8).lines()
        .anyMatch(l -> l.startsWith("raft.transport ") && l.contains("GRPC") && l.endsWith("conf file")), out::toString);
  }

  @Test
  @Timeout(30)
  void templateListsExactlyTheKnownKeysWithTheirDefaultsAndDocs(@TempDir Path dir) throws Exception {
    List<String> lines = Files.readAllLines(Path.of("..", "conf", "node.properties"));
    List<String> names = new ArrayList<>();
    StringBuilder uncommented = new StringBuilder();
    StringBuilder doc = new StringBuilder();
    for (String line : lines) {
      Matcher m = SETTING.matcher(line);
      if (m.matches()) {
        Key k = NodeConfigKeys.byName(m.group(1));
        assertTrue(k != null, "the template names an unknown key: " + line);
        String value = m.group(2) == null ? "" : m.group(2);
        assertEquals(k.defaultValue(), value, "the template's default of " + k.name());
        assertTrue(doc.toString().startsWith(k.doc()), "the template's comment on " + k.name() + " is not "
            + "its doc: " + doc);
        names.add(k.name());
        uncommented.append(line.substring(1)).append('\n');
        doc.setLength(0);
      } else if (line.isBlank() || line.startsWith("##")) {
        doc.setLength(0);
      } else if (line.startsWith("# ")) {
        doc.append(doc.length() == 0 ? "" : " ").append(line.substring(2));
      }
    }
    assertEquals(NodeConfigKeys.ALL.stream().map(Key::name).toList(), names);
    Map<Key, String> read = NodeConf.read(write(dir, uncommented.toString()));
    for (Map.Entry<Key, String> e : read.entrySet()) {
      assertEquals(e.getKey().defaultValue(), e.getValue());
    }
  }

  /** A two-node cluster file in {@code dir}; node 1 serves metrics on 9100 (nothing starts). */
  static Path cluster(Path dir) throws Exception {
    return Files.writeString(dir.resolve("cluster.conf"), "node 1 127.0.0.1 raft=7101 client=7201 metrics=9100\n"
        + "node 2 127.0.0.1 raft=7102 client=7202\ngroup oracle oracle 1,2\ngroup p0 partition 1,2\n");
  }

  private static Path write(Path dir, String text) throws Exception {
    return Files.writeString(Files.createTempFile(dir, "node", ".properties"), text);
  }

  private static Args args(String... argv) throws Args.UsageException {
    return Args.parse(List.of(argv), NodeLauncher.OPTIONS, NodeLauncher.SWITCHES);
  }
}
