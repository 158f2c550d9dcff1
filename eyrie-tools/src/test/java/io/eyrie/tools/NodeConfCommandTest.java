package io.eyrie.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Owns the check of {@code eyrie node --print-conf --conf FILE} through the tools' command-line
 * entry point: every key printed once with its value and source (default, cluster file, conf
 * file, flag), exit 0 without starting a node; an unknown key or a bad value exits 2 with one line.
 */
class NodeConfCommandTest {

  @Test
  @Timeout(60)
  void printConfShowsEveryKeyItsValueAndSourceWithoutStarting(@TempDir Path dir) throws Exception {
    Path cluster = NodeConfTest.cluster(dir);
    Path conf = Files.writeString(dir.resolve("node.properties"),
        "raft.snapshot.threshold = 500\nmetrics.port = 9200\nclient.connections.max = 10\n");
    Path data = dir.resolve("n1");
    String[] r = EyrieRuns.run("node", "--print-conf", "--conf", conf.toString(), "--cluster", cluster.toString(),
        "--id", "1", "--data", data.toString(), "--metrics-port", "9300");
    assertEquals("0", r[0], r[2]);
    Map<String, String[]> rows = new LinkedHashMap<>();
    for (String line : r[1].split("\n")) {
      if (!line.startsWith("#")) {
        String[] f = line.trim().split("\\s+", 3);
        assertEquals(3, f.length, line);
        assertTrue(rows.put(f[0], f) == null, "printed twice: " + f[0]);
      }
    }
    assertEquals(NodeConfigKeys.ALL.stream().map(NodeConfigKeys.Key::name).toList(), rows.keySet().stream().toList());
    assertRow(rows, "raft.snapshot.threshold", "500", "conf file");
    assertRow(rows, "client.connections.max", "10", "conf file");
    assertRow(rows, "metrics.port", "9300", "flag --metrics-port");
    assertRow(rows, "data.dir", data.toAbsolutePath().normalize().toString(), "flag --data");
    assertRow(rows, "raft.election.timeout.min.ms", "600", "default");
    assertRow(rows, "tls.dir", "-", "default");
    assertFalse(Files.exists(data), "--print-conf must not start the node");

    // Without --metrics-port the file wins over the cluster file's metrics=9100.
    String[] fileWins = EyrieRuns.run("node", "--print-conf", "--conf", conf.toString(), "--cluster",
        cluster.toString(), "--id", "1");
    assertEquals("0", fileWins[0], fileWins[2]);
    assertTrue(fileWins[1].lines().anyMatch(l -> l.matches("metrics\\.port\\s+9200\\s+conf file")), fileWins[1]);
  }

  @Test
  @Timeout(60)
  void unknownKeyOrBadValueExitsTwoWithOneLine(@TempDir Path dir) throws Exception {
    Path cluster = NodeConfTest.cluster(dir);
    Path unknown = Files.writeString(dir.resolve("a.properties"), "client.conections.max = 10\n");
    String[] r = EyrieRuns.run("node", "--print-conf", "--conf", unknown.toString(), "--cluster", cluster.toString(),
        "--id", "1");
    assertEquals("2", r[0]);
    assertEquals(1, r[2].lines().count(), r[2]);
    assertTrue(r[2].contains("unknown key 'client.conections.max' (did you mean 'client.connections.max'?)"), r[2]);
    Path bad = Files.writeString(dir.resolve("b.properties"), "client.frame.idle.timeout.ms = soon\n");
    String[] b = EyrieRuns.run("node", "--conf", bad.toString(), "--cluster", cluster.toString(), "--id", "1",
        "--service", "io.eyrie.examples.kv.KvService");
    assertEquals("2", b[0]);
    assertEquals(1, b[2].lines().count(), b[2]);
    assertTrue(b[2].contains("bad value for client.frame.idle.timeout.ms: 'soon'"), b[2]);
  }

  private static void assertRow(Map<String, String[]> rows, String key, String value, String source) {
    String[] row = rows.get(key);
    assertEquals(value, row[1], key);
    assertEquals(source, row[2], key);
  }
}
