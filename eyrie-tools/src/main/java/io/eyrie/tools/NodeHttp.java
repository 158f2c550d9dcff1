package io.eyrie.tools;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.GroupStatus;
import io.eyrie.multicast.Node;
import io.eyrie.multicast.RatisMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;

/**
 * A node's HTTP endpoint for operators (the JDK's HTTP server, one daemon thread):
 *
 * <ul>
 *   <li>{@code /metrics}: Prometheus text format: {@link NodeMetrics}, the JVM's memory and
 *       threads, and Ratis's own metrics ({@link RatisMetrics}: elections, log appends, commit
 *       indexes, request timers; prefixed {@code ratis_}, labelled with the Ratis registry they
 *       come from);
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
      send(ex, 200, "text/plain; version=0.0.4; charset=utf-8", registry.scrape() + RatisMetrics.prometheusText());
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

  @Override
  public void close() {
    server.stop(0);
  }
}
