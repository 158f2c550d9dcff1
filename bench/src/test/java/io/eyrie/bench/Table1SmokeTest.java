package io.eyrie.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The Table 1 runner end to end on one small cell: both modes, every output file, sane numbers. */
class Table1SmokeTest {

  @Test
  @Timeout(300)
  void oneCellBothModesAllOutputs(@TempDir Path dir) throws Exception {
    Table1.Options o = Table1.parse(new String[] {"--partitions", "2", "--workloads", "follow", "--duration", "4",
        "--warmup", "2", "--users", "200", "--follows", "5", "--communities", "20", "--no-baseline",
        "--out", dir.toString()});
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    assertEquals(0, Table1.run(o, new PrintStream(log, true, StandardCharsets.UTF_8)));
    System.out.print(log.toString(StandardCharsets.UTF_8));

    List<String> csv = Files.readAllLines(dir.resolve("table1.csv"));
    assertEquals(3, csv.size(), "header and one row per mode: " + csv);
    String[] header = csv.get(0).split(",");
    Map<String, Map<String, String>> rows = new HashMap<>();
    for (String line : csv.subList(1, csv.size())) {
      String[] f = line.split(",", -1);
      Map<String, String> r = new HashMap<>();
      for (int i = 0; i < header.length; i++) {
        r.put(header[i], f[i]);
      }
      rows.put(r.get("mode"), r);
    }
    for (String mode : List.of("ssmr", "dssmr")) {
      Map<String, String> r = rows.get(mode);
      assertTrue(Double.parseDouble(r.get("throughput")) > 0, mode + " served commands");
      assertTrue(Double.parseDouble(r.get("p99_ms")) >= Double.parseDouble(r.get("p50_ms")), mode);
      assertTrue(Double.parseDouble(r.get("log_entries_per_cmd")) > 0, mode + " cost columns filled");
    }
    assertEquals(0.0, Double.parseDouble(rows.get("ssmr").get("moves_per_s")), "S-SMR never moves");
    assertTrue(Double.parseDouble(rows.get("ssmr").get("channel_items_per_cmd")) > 0,
        "S-SMR exchanges objects between partitions for follows across them");
    // DS-SMR gathers users of a community in its home, mostly during the warm-up (on a fast run it
    // has moved all it will before the measured window starts, so moves/s there may be 0): what it
    // leaves is fewer multi-partition commands than S-SMR runs.
    double ds = Double.parseDouble(rows.get("dssmr").get("multi_partition_share"));
    double s = Double.parseDouble(rows.get("ssmr").get("multi_partition_share"));
    assertTrue(ds < 0.75 * s, "DS-SMR moved users together: " + ds + " of its commands multi-partition, S-SMR " + s);

    String md = Files.readString(dir.resolve("table1.md"));
    assertTrue(md.contains("ratio DS/S (paper)") && md.contains("| 4.27 |"), "the paper's follow ratio at 2 partitions");
    assertTrue(md.contains("**ratio DS/S (ours)**"));
    for (String png : List.of("table1-throughput.png")) {
      BufferedImage img = ImageIO.read(dir.resolve(png).toFile());
      assertTrue(img.getWidth() > 400 && img.getHeight() > 300, png);
    }
  }

  /**
   * {@code --interleave 2}: both modes' clusters run side by side, each is measured twice in
   * alternating windows (ABBA: S, D, D, S), the cell is the mean of its windows, and every window
   * and each round's ratio are written.
   */
  @Test
  @Timeout(300)
  void interleavedWindowsAlternateTheModesAndAreAllReported(@TempDir Path dir) throws Exception {
    Table1.Options o = Table1.parse(new String[] {"--partitions", "2", "--workloads", "timeline", "--duration", "2",
        "--warmup", "1", "--users", "100", "--follows", "3", "--communities", "10", "--no-baseline",
        "--interleave", "2", "--out", dir.toString()});
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    assertEquals(0, Table1.run(o, new PrintStream(log, true, StandardCharsets.UTF_8)));
    String text = log.toString(StandardCharsets.UTF_8);
    System.out.print(text);
    List<String> order = text.lines().filter(l -> l.trim().startsWith("window "))
        .map(l -> l.trim().split(" ")[1] + " " + l.trim().split(" ")[2].replace(":", "")).toList();
    assertEquals(List.of("1 ssmr", "1 dssmr", "2 dssmr", "2 ssmr"), order, "ABBA order");
    List<String> csv = Files.readAllLines(dir.resolve("table1.csv"));
    assertEquals(3, csv.size(), "one combined row per mode: " + csv);
    String windows = Files.readString(dir.resolve("table1-windows.md"));
    assertTrue(windows.contains("| timeline 2 | 1 |") && windows.contains("| timeline 2 | 2 |"), windows);
    assertTrue(windows.contains("| timeline 2 | mean / smallest |"), windows);
  }

  @Test
  void interleaveMustBePositive() {
    org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
        () -> Table1.parse(new String[] {"--interleave", "0"}));
  }

  @Test
  void slotsSpreadUsersOverPartitionsIndependentlyOfCommunities() {
    int[] counts = new int[4];
    for (long u = 0; u < 4000; u++) {
      counts[Table1Seed.slot(u, 4)]++;
    }
    for (int c : counts) {
      assertTrue(c > 800 && c < 1200, java.util.Arrays.toString(counts));
    }
    // users of one community (u mod 64 == 5) do not all start together
    java.util.Set<Integer> slots = new java.util.HashSet<>();
    for (long u = 5; u < 4000; u += 64) {
      slots.add(Table1Seed.slot(u, 4));
    }
    assertEquals(4, slots.size());
  }
}
