package io.eyrie.dist;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The distribution as a user gets it: the archive is unpacked in an empty folder, away from the
 * source tree, and its own bin/eyrie prints its version and configuration and runs a one-node
 * cluster of the example key-value service that {@code status} finds led.
 */
@Timeout(180)
class DistributionTest {
  @TempDir
  Path dir;

  /** Runs a command in {@code cwd}; returns its exit code and output (stdout and stderr). */
  private static String[] run(Path cwd, long seconds, String... cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).directory(cwd.toFile()).redirectErrorStream(true).start();
    if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return new String[] {"timeout", new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8)};
    }
    return new String[] {String.valueOf(p.exitValue()),
        new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8)};
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  @Test
  void theUnpackedArchiveRunsANodeOfTheExampleService() throws Exception {
    String version = System.getProperty("eyrie.version");
    Path archive = Path.of(System.getProperty("eyrie.dist"));
    assertTrue(Files.exists(archive), "the archive was built: " + archive);
    String[] untar = run(dir, 60, "tar", "xzf", archive.toString());
    assertEquals("0", untar[0], untar[1]);
    Path home = dir.resolve("eyrie-" + version);
    for (String f : List.of("bin/eyrie", "lib/eyrie.jar", "lib/eyrie-examples.jar", "conf/local-3.conf",
        "conf/node.properties", "README.md")) {
      assertTrue(Files.exists(home.resolve(f)), f + " is in the archive");
    }
    assertTrue(home.resolve("bin/eyrie").toFile().canExecute(), "bin/eyrie is executable");

    String[] v = run(home, 60, "bin/eyrie", "--version");
    assertEquals("0", v[0], v[1]);
    assertTrue(v[1].contains(version), v[1]);

    String[] conf = run(home, 60, "bin/eyrie", "node", "--print-conf", "--cluster", "conf/local-3.conf", "--id",
        "1", "--service", "io.eyrie.examples.kv.KvService", "--conf", "conf/node.properties");
    assertEquals("0", conf[0], conf[1]);
    assertTrue(conf[1].contains("raft.election.timeout.min.ms"), conf[1]);

    Path cluster = dir.resolve("one.conf");
    Files.writeString(cluster, "node 1 127.0.0.1 raft=" + freePort() + " client=" + freePort() + "\n"
        + "group oracle oracle 1\ngroup p0 partition 1\n");
    List<String> node = new ArrayList<>(List.of("bin/eyrie", "node", "--cluster", cluster.toString(), "--id", "1",
        "--service", "io.eyrie.examples.kv.KvService", "--data", dir.resolve("n1").toString()));
    File log = dir.resolve("node.log").toFile();
    Process n = new ProcessBuilder(node).directory(home.toFile()).redirectErrorStream(true)
        .redirectOutput(log).start();
    try {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      String[] status;
      do {
        assertTrue(n.isAlive(), () -> "the node stopped: " + read(log));
        status = run(home, 30, "bin/eyrie", "status", "--cluster", cluster.toString(), "--timeout", "2s");
        if ("0".equals(status[0])) {
          break;
        }
        Thread.onSpinWait();
      } while (System.nanoTime() < deadline);
      assertEquals("0", status[0], () -> "status never found every group led; node log: " + read(log));
      assertTrue(status[1].contains("p0") && status[1].contains("leader n1"), status[1]);
    } finally {
      n.destroy();
      if (!n.waitFor(30, TimeUnit.SECONDS)) {
        n.destroyForcibly();
      }
    }
  }

  private static String read(File f) {
    try {
      return Files.readString(f.toPath());
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  /** The BOM names every module an application may depend on, at this build's version. */
  @Test
  void theBomManagesThePublishedModulesAtThisVersion() throws Exception {
    String bom = Files.readString(Path.of("..", "eyrie-bom", "pom.xml"));
    String version = System.getProperty("eyrie.version");
    assertTrue(bom.contains("<version>" + version + "</version>"), "the BOM's own version is the build's");
    for (String m : List.of("eyrie-multicast", "eyrie-core", "eyrie-oracle", "eyrie-tools", "eyrie-examples")) {
      assertTrue(bom.contains("<artifactId>" + m + "</artifactId><version>${project.version}</version>"), m);
    }
  }
}
