package io.eyrie.examples.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * With logback on the class path and no configuration at all, one start and two commands print
 * a handful of lines, not thousands (logback's default is DEBUG for everything; Ratis and Netty
 * are verbose). The run happens in a child JVM whose class path lacks this module's test
 * resources (and so their logback-test.xml). Library modules ship no logback configuration.
 */
@Timeout(240)
class QuietLoggingTest {

  @Test
  void aStartAndTwoCommandsWithUnconfiguredLogbackAreQuiet(@TempDir Path tmp) throws Exception {
    Path testClasses = Path.of("target", "test-classes").toAbsolutePath();
    Path mainDir = tmp.resolve("main/io/eyrie/examples/kv");
    Files.createDirectories(mainDir);
    Files.copy(testClasses.resolve("io/eyrie/examples/kv/QuietStartMain.class"), mainDir.resolve("QuietStartMain.class"));
    List<String> cp = new ArrayList<>();
    cp.add(tmp.resolve("main").toString());
    for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
      // No test-classes directory (this module's or the multicast test-jar's in the reactor):
      // they hold logback-test.xml files.
      if (!e.endsWith("test-classes") && !e.endsWith("test-classes/") && !e.endsWith("-tests.jar")) {
        cp.add(e);
      }
    }
    assertTrue(cp.stream().anyMatch(e -> e.contains("logback-classic")), "logback is on the class path");
    try (java.net.URLClassLoader l = new java.net.URLClassLoader(cp.stream().map(e -> {
      try {
        return Path.of(e).toUri().toURL();
      } catch (java.net.MalformedURLException x) {
        throw new IllegalStateException(x);
      }
    }).toArray(java.net.URL[]::new), null)) {
      assertEquals(null, l.getResource("logback-test.xml"), "the child has no logback configuration");
      assertEquals(null, l.getResource("logback.xml"), "the child has no logback configuration");
    }
    Path out = Path.of("target", "quiet-logging-child.log").toAbsolutePath(); // kept for a look after a failure
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx256m", "-cp", String.join(File.pathSeparator, cp), "io.eyrie.examples.kv.QuietStartMain")
        .redirectErrorStream(true).redirectOutput(out.toFile()).start();
    assertTrue(p.waitFor(180, TimeUnit.SECONDS), "the child finished");
    List<String> lines = Files.readAllLines(out);
    assertEquals(0, p.exitValue(), String.join("\n", lines.subList(0, Math.min(40, lines.size()))));
    assertTrue(lines.stream().anyMatch(l -> l.startsWith("QUIET-START-MAIN ok(v)")), "the commands ran");
    assertTrue(lines.size() < 100, lines.size() + " lines, starting with:\n"
        + String.join("\n", lines.subList(0, Math.min(40, lines.size()))));
  }

  @Test
  void libraryModulesShipNoLogbackConfiguration() throws Exception {
    Path root = Path.of("").toAbsolutePath().getParent();
    for (String m : List.of("eyrie-multicast", "eyrie-core", "eyrie-oracle", "eyrie-examples")) {
      Path res = root.resolve(m).resolve("src/main/resources");
      if (Files.isDirectory(res)) {
        try (Stream<Path> s = Files.walk(res)) {
          assertEquals(List.of(), s.filter(f -> f.getFileName().toString().startsWith("logback")).toList(), m);
        }
      }
    }
  }
}
