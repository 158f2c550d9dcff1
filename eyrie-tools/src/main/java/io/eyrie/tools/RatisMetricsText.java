package io.eyrie.tools;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.apache.ratis.metrics.MetricRegistries;
import org.apache.ratis.metrics.MetricRegistryInfo;
import org.apache.ratis.metrics.RatisMetricRegistry;
import org.apache.ratis.metrics.impl.RatisMetricRegistryImpl;
import org.apache.ratis.thirdparty.com.codahale.metrics.Counting;
import org.apache.ratis.thirdparty.com.codahale.metrics.Metric;
import org.apache.ratis.thirdparty.com.codahale.metrics.Sampling;

/**
 * Owns the translation of Ratis's own metrics (its shaded Dropwizard registries) into the
 * Prometheus text that {@link NodeHttp} appends to {@code /metrics}, prefixed {@code ratis_}.
 */
final class RatisMetricsText {
  private RatisMetricsText() {}

  /**
   * Ratis's metrics in Prometheus text form. Ratis keeps them in (shaded) Dropwizard registries,
   * one per server, group and component; their names are made Prometheus-safe and the registry
   * becomes a label so that a metric's name is the same for every group.
   */
  static String scrape() {
    Map<String, List<String>> byName = new TreeMap<>();
    for (RatisMetricRegistry r : MetricRegistries.global().getMetricRegistries()) {
      if (!(r instanceof RatisMetricRegistryImpl impl)) {
        continue;
      }
      MetricRegistryInfo info = r.getMetricRegistryInfo();
      String base = "ratis_" + clean(info.getMetricsComponentName());
      String label = "{registry=\"" + info.getPrefix().replace("\\", "\\\\").replace("\"", "\\\"") + "\"}";
      for (Map.Entry<String, Metric> e : impl.getDropWizardMetricRegistry().getMetrics().entrySet()) {
        // Ratis names a metric "ratis.<component>.<registry prefix>.<metric>": keep <metric>, so
        // that the name is the same for every group and the group is in the label.
        String key = e.getKey();
        int at = key.indexOf(info.getPrefix() + ".");
        String name = base + "_" + clean(at >= 0 ? key.substring(at + info.getPrefix().length() + 1) : key);
        Metric m = e.getValue();
        if (m instanceof org.apache.ratis.thirdparty.com.codahale.metrics.Gauge<?> gauge) {
          Object v;
          try {
            v = gauge.getValue();
          } catch (RuntimeException ex) {
            continue;
          }
          if (v instanceof Number n) {
            byName.computeIfAbsent(name, k -> new ArrayList<>()).add(name + label + " " + n.doubleValue());
          }
        } else if (m instanceof Counting c) {
          byName.computeIfAbsent(name + "_count", k -> new ArrayList<>()).add(name + "_count" + label + " " + c.getCount());
          if (m instanceof Sampling s) {
            double p99 = s.getSnapshot().get99thPercentile();
            byName.computeIfAbsent(name + "_p99", k -> new ArrayList<>()).add(name + "_p99" + label + " " + p99);
          }
        }
      }
    }
    StringBuilder b = new StringBuilder();
    byName.forEach((name, lines) -> {
      b.append("# TYPE ").append(name).append(" untyped\n");
      lines.forEach(l -> b.append(l).append('\n'));
    });
    return b.toString();
  }

  private static String clean(String s) {
    String t = s.replaceAll("[^A-Za-z0-9_]", "_").replaceAll("_+", "_");
    return t.toLowerCase(Locale.ROOT);
  }
}
