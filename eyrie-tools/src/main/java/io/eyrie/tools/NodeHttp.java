package io.eyrie.tools;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.GroupStatus;
import io.eyrie.multicast.Node;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import org.apache.ratis.metrics.MetricRegistries;
import org.apache.ratis.metrics.MetricRegistryInfo;
import org.apache.ratis.metrics.RatisMetricRegistry;
import org.apache.ratis.metrics.impl.RatisMetricRegistryImpl;
import org.apache.ratis.thirdparty.com.codahale.metrics.Counting;
import org.apache.ratis.thirdparty.com.codahale.metrics.Gauge;
import org.apache.ratis.thirdparty.com.codahale.metrics.Metric;
import org.apache.ratis.thirdparty.com.codahale.metrics.Sampling;

/**
 * A node's HTTP endpoint for operators (the JDK's HTTP server, one daemon thread):
 *
 * <ul>
 *   <li>{@code /metrics}: Prometheus text format: {@link NodeMetrics}, the JVM's memory and
 *       threads, and Ratis's own metrics (elections, log appends, commit indexes: prefixed
 *       {@code ratis_}, labelled with the Ratis registry they come from);
 *   <li>{@code /ready}: 200 when every hosted group has a leader and this replica has applied
 *       every entry it knows to be committed, else 503; the body says which group is not.
 * </ul>
 */
public final class NodeHttp implements AutoCloseable {
  private final Node node;
  private final HttpServer server;
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final NodeMetrics metrics;

  private NodeHttp(Node node, String host, int port) throws IOException {
    this.node = node;
    this.metrics = new NodeMetrics(node);
    metrics.bindTo(registry);
    new io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics().bindTo(registry);
    new io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics().bindTo(registry);
    this.server = HttpServer.create(new InetSocketAddress(host, port), 16);
    server.setExecutor(Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "eyrie-http-" + node.id());
      t.setDaemon(true);
      return t;
    }));
    server.createContext("/metrics", ex -> {
      metrics.bindGroups(registry); // groups added to the running cluster since
      send(ex, 200, "text/plain; version=0.0.4; charset=utf-8", registry.scrape() + ratisMetrics());
    });
    server.createContext("/ready", ex -> {
      List<String> notReady = notReady();
      send(ex, notReady.isEmpty() ? 200 : 503, "text/plain; charset=utf-8",
          notReady.isEmpty() ? "ready\n" : String.join("\n", notReady) + "\n");
    });
    server.start();
  }

  /**
   * Starts serving.
   *
   * @param node the node
   * @param host the address to listen on
   * @param port the port (0 picks a free one)
   * @return the running endpoint
   * @throws IOException if the port cannot be bound
   */
  public static NodeHttp start(Node node, String host, int port) throws IOException {
    return new NodeHttp(node, host, port);
  }

  /** Returns the port it listens on. */
  public int port() {
    return server.getAddress().getPort();
  }

  /** Returns why this node is not ready, one line per group; empty when it is. */
  public List<String> notReady() {
    List<String> out = new ArrayList<>();
    for (GroupId g : node.groups()) {
      GroupStatus s = node.localStatus(g);
      GroupStatus.Replica r = s.replicas().get(0);
      if (!r.reachable()) {
        out.add(g + ": no local replica");
      } else if (s.leader() == 0) {
        out.add(g + ": no leader");
      } else if (s.lag(r) > 0) {
        out.add(g + ": applied " + r.appliedIndex() + " of " + r.commitIndex() + " committed");
      }
    }
    return out;
  }

  private static void send(HttpExchange ex, int status, String type, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", type);
    ex.sendResponseHeaders(status, bytes.length);
    try (OutputStream os = ex.getResponseBody()) {
      os.write(bytes);
    }
  }

  /**
   * Ratis's metrics in Prometheus text form. Ratis keeps them in (shaded) Dropwizard registries,
   * one per server, group and component; their names are made Prometheus-safe and the registry
   * becomes a label so that a metric's name is the same for every group.
   */
  static String ratisMetrics() {
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
        if (m instanceof Gauge<?> gauge) {
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

  @Override
  public void close() {
    server.stop(0);
  }
}
