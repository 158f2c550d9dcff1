package io.eyrie.tools;

import io.eyrie.multicast.EmbeddedCluster;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Collection;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads nodes' {@code /metrics} the way Prometheus would, for tests that check a counter moved. */
final class MetricsScrape {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private MetricsScrape() {}

  /** Starts an HTTP endpoint ({@code /metrics}, {@code /ready}) on every running node of the cluster, by node id. */
  static void serve(EmbeddedCluster cluster, Map<Integer, NodeHttp> into) throws IOException {
    for (int id : cluster.runningNodes().keySet()) {
      into.put(id, NodeHttp.start(cluster.node(id), "127.0.0.1", 0));
    }
  }

  /** Closes the endpoints, then the cluster (if it was started). */
  static void close(Map<Integer, NodeHttp> http, EmbeddedCluster cluster) {
    http.values().forEach(NodeHttp::close);
    if (cluster != null) {
      cluster.close();
    }
  }

  /**
   * The sum over the nodes of a metric's samples whose labels contain every one of {@code labels}
   * (all samples if none is given).
   *
   * @param nodes the nodes' HTTP endpoints
   * @param name the metric's name as exported, e.g. {@code eyrie_endpoint_forbidden_total}
   * @param labels label texts such as {@code reason="timeout"}
   * @return the sum
   */
  static double sum(Collection<NodeHttp> nodes, String name, String... labels) {
    double sum = 0;
    Pattern sample = Pattern.compile("(?m)^" + name + "(?:\\{([^}]*)\\})? (\\S+)$");
    for (NodeHttp h : nodes) {
      Matcher m = sample.matcher(body(h));
      while (m.find()) {
        String have = m.group(1) == null ? "" : m.group(1);
        boolean all = true;
        for (String l : labels) {
          all &= have.contains(l);
        }
        if (all) {
          sum += Double.parseDouble(m.group(2));
        }
      }
    }
    return sum;
  }

  private static String body(NodeHttp h) {
    try {
      return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + h.port() + "/metrics")).build(),
          HttpResponse.BodyHandlers.ofString()).body();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
