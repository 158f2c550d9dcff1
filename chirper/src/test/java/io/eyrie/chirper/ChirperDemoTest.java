package io.eyrie.chirper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code chirper demo}, end to end with a short duration and a small graph: it exits 0, prints
 * the progress lines and the summary with a non-zero throughput, and writes a readable PNG chart
 * and the time series.
 */
@Timeout(300)
class ChirperDemoTest {
  @Test
  void demoRunsPrintsTheSummaryAndWritesTheChart(@TempDir Path dir) throws Exception {
    System.setProperty("java.awt.headless", "true");
    ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
    ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
    int duration = 5;
    long t0 = System.nanoTime();
    int code;
    try (PrintStream out = new PrintStream(outBytes, true, StandardCharsets.UTF_8);
        PrintStream err = new PrintStream(errBytes, true, StandardCharsets.UTF_8)) {
      code = ChirperMain.run(new String[] {"demo", "--duration", duration + "s", "--users", "60", "--follows", "3",
          "--out", dir.toString()}, out, err);
    }
    double took = (System.nanoTime() - t0) / 1e9;
    String out = outBytes.toString(StandardCharsets.UTF_8);
    String err = errBytes.toString(StandardCharsets.UTF_8);
    System.out.println(out);
    System.out.println("stderr: " + err);
    System.out.printf("demo took %.1f s for a %d s load%n", took, duration);
    assertEquals(0, code, "exit code; stderr: " + err);

    Matcher setup = Pattern.compile("setup: done in ([0-9.]+) s").matcher(out);
    assertTrue(setup.find(), "the setup line");
    // The load itself ends on time; the rest is cluster start, graph setup and shutdown.
    assertTrue(took < duration + Double.parseDouble(setup.group(1)) + 60, "took " + took + " s");
    assertTrue(out.contains("[  " + duration + "/" + duration + "s]"), "a progress line per second up to the end");

    Matcher tput = Pattern.compile("throughput\\s+\\|\\s+([0-9.]+) cmd/s").matcher(out);
    assertTrue(tput.find(), "the summary's throughput row");
    assertTrue(Double.parseDouble(tput.group(1)) > 0, "commands completed");
    for (String row : new String[] {"latency p50", "latency p99", "moves", "retries", "fallbacks",
        "single-partition share"}) {
      assertTrue(out.contains(row), "summary row " + row);
    }

    // Users are created in their community's home, and Chirper's oracle gathers a command's users
    // only within one home (across homes it runs S-SMR): nobody ever has to move. A rule that
    // takes users out of their homes keeps moving them (about 45 moves a second under the
    // majority rule this replaced).
    Matcher setupMoves = Pattern.compile("setup: done in .*; ([0-9]+) moves;").matcher(out);
    assertTrue(setupMoves.find(), "the setup line counts moves");
    assertEquals(0, Long.parseLong(setupMoves.group(1)), "moves during the setup");
    Matcher moves = Pattern.compile("\\n moves\\s+\\|\\s+([0-9]+) \\|").matcher(out);
    assertTrue(moves.find(), "the summary's moves row");
    assertEquals(0, Long.parseLong(moves.group(1)), "moves during the load");

    Path png = dir.resolve("chirper-demo.png");
    assertTrue(Files.size(png) > 1000, "the chart is written");
    BufferedImage img = ImageIO.read(png.toFile());
    assertNotNull(img, "the chart is a readable PNG");
    assertTrue(img.getWidth() >= 400 && img.getHeight() >= 300, "chart size " + img.getWidth() + "x" + img.getHeight());
    long seriesLines = Files.readAllLines(dir.resolve("chirper-demo.csv")).size();
    assertTrue(seriesLines >= duration, "one time-series row per second, got " + seriesLines);
  }

  /**
   * {@code chirper demo --tls}: the embedded cluster runs mutual TLS on its client and Raft ports
   * with certificates written for the run, a client without a certificate is refused, the
   * clients (with a client certificate) complete commands with no error, and the certificates'
   * directory is gone afterwards.
   */
  @Test
  @Timeout(240)
  void demoRunsWithTls(@TempDir Path dir) throws Exception {
    System.setProperty("java.awt.headless", "true");
    ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
    ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
    int code;
    try (PrintStream out = new PrintStream(outBytes, true, StandardCharsets.UTF_8);
        PrintStream err = new PrintStream(errBytes, true, StandardCharsets.UTF_8)) {
      code = ChirperMain.run(new String[] {"demo", "--tls", "--duration", "3s", "--users", "60", "--follows", "3",
          "--out", dir.toString()}, out, err);
    }
    String out = outBytes.toString(StandardCharsets.UTF_8);
    String err = errBytes.toString(StandardCharsets.UTF_8);
    System.out.println(out);
    System.out.println("stderr: " + err);
    assertEquals(0, code, "exit code; stderr: " + err);
    Matcher certs = Pattern.compile("tls: mutual TLS on the client and Raft ports; a development CA and certificates"
        + " in (\\S+) \\(removed at exit\\); the clients connect as chirper \\(client\\)").matcher(out);
    assertTrue(certs.find(), "the TLS line");
    assertTrue(!Files.exists(Path.of(certs.group(1))), "the certificates are removed at exit");
    assertTrue(out.contains("tls: a client without a certificate is refused: ") && out.contains("requires mutual TLS"),
        "the plaintext client refused");
    Matcher tput = Pattern.compile("throughput\\s+\\|\\s+([0-9.]+) cmd/s").matcher(out);
    assertTrue(tput.find() && Double.parseDouble(tput.group(1)) > 0, "commands completed over TLS");
    Matcher errors = Pattern.compile("\\n errors\\s+\\|\\s+([0-9]+) ").matcher(out);
    assertTrue(errors.find(), "the summary's errors row");
    assertEquals(0, Long.parseLong(errors.group(1)), "errors");
  }
}
