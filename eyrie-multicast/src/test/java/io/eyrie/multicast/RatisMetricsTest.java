package io.eyrie.multicast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.internal.LightMetricRegistries;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.ratis.metrics.MetricRegistries;
import org.apache.ratis.metrics.MetricRegistryInfo;
import org.apache.ratis.metrics.RatisMetricRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Ratis finds Eyrie's light metric registries (not Dropwizard's, whose timers cost 15% of the
 * benchmark's CPU), its servers record into them, and {@link RatisMetrics} exports what they
 * recorded.
 */
@Timeout(120)
class RatisMetricsTest {

  @Test
  void ratisUsesTheLightRegistries() {
    assertInstanceOf(LightMetricRegistries.class, MetricRegistries.global(),
        "the service file names them and ratis-metrics-default is not on the class path");
  }

  @Test
  void aTimerCountsSumsAndBoundsItsQuantiles() {
    LightMetricRegistries.Timer t = new LightMetricRegistries.Timer();
    assertEquals(0, t.quantileUpperBoundSeconds(0.99));
    for (int i = 0; i < 98; i++) {
      t.record(TimeUnit.MICROSECONDS.toNanos(100)); // bucket [64, 128) us
    }
    t.record(TimeUnit.MILLISECONDS.toNanos(3)); // [2048, 4096) us
    t.record(TimeUnit.MILLISECONDS.toNanos(50)); // [32768, 65536) us
    assertEquals(100, t.count());
    assertEquals(98 * 100_000L + 3_000_000L + 50_000_000L, t.totalNanos());
    assertEquals(128e-6, t.quantileUpperBoundSeconds(0.5), 1e-12);
    assertEquals(4096e-6, t.quantileUpperBoundSeconds(0.99), 1e-12);
    assertEquals(65536e-6, t.quantileUpperBoundSeconds(1.0), 1e-12);
    t.record(-5);
    assertEquals(101, t.count());
    LightMetricRegistries.Timer.Context c = t.time();
    assertTrue(c.stop() >= 0);
    assertEquals(102, t.count());
  }

  @Test
  void registriesAreCreatedOnceAndReportedToRegistrations() {
    LightMetricRegistries r = new LightMetricRegistries();
    List<RatisMetricRegistry> added = new java.util.ArrayList<>();
    List<RatisMetricRegistry> removed = new java.util.ArrayList<>();
    r.addReporterRegistration(added::add, removed::add);
    MetricRegistryInfo info = new MetricRegistryInfo("p", "app", "component", "d");
    RatisMetricRegistry a = r.create(info);
    assertTrue(a == r.create(info), "one registry per info");
    assertEquals(List.of(a), added);
    a.counter("c").inc(3);
    a.counter("c").dec();
    assertEquals(2, a.counter("c").getCount());
    assertEquals(Set.of(info), r.getMetricRegistryInfos());
    assertTrue(r.remove(info));
    assertEquals(List.of(a), removed);
    assertTrue(r.getMetricRegistries().isEmpty());
  }

  @Test
  void aRunningClusterRecordsRatisTimersAndTheExportShowsThem() throws Exception {
    try (EmbeddedCluster c = EmbeddedCluster.newBuilder().nodes(3).partitions(1)
        .deliverers(new EchoDeliverers()).start()) {
      c.awaitLeaders(Duration.ofSeconds(60));
      GroupId g = c.cluster().partitions().get(0);
      try (MulticastClient client = c.newClient()) {
        for (int i = 0; i < 20; i++) {
          client.multicast(new java.util.TreeSet<>(Set.of(g)), "x".getBytes(StandardCharsets.UTF_8))
              .get(30, TimeUnit.SECONDS);
        }
      }
      String text = RatisMetrics.prometheusText();
      // Some timer of Ratis's log worker or server counted the writes and spent time on them.
      Matcher m = Pattern.compile("(?m)^(ratis_\\w+)_seconds_sum\\{registry=\"[^\"]*\"\\} (\\S+)$").matcher(text);
      double maxSum = 0;
      while (m.find()) {
        maxSum = Math.max(maxSum, Double.parseDouble(m.group(2)));
      }
      assertTrue(maxSum > 0, "a Ratis timer with time recorded in:\n" + text);
      Matcher counts = Pattern.compile("(?m)^ratis_\\w+_count\\{[^}]*\\} (\\S+)$").matcher(text);
      double maxCount = 0;
      while (counts.find()) {
        maxCount = Math.max(maxCount, Double.parseDouble(counts.group(1)));
      }
      assertTrue(maxCount >= 20, "a Ratis count of at least the 20 writes in:\n" + text);
      assertTrue(text.contains("# TYPE ratis_"), text);
    }
  }
}
