package io.eyrie.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Service;
import io.eyrie.examples.bank.BankService;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.multicast.testing.Waits;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code eyrie status}, {@code eyrie audit}, {@code /metrics} and {@code /ready} against a
 * running 3-node cluster (real Ratis groups on loopback): they report the leaders, the objects
 * and the indexes, and a killed leader shows up in both status and metrics.
 */
@Timeout(240)
class StatusAndMetricsTest {
  private static final GroupId P0 = GroupId.valueOf("p0");
  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void statusAndMetricsShowALeaderKill(@TempDir Path dir) throws Exception {
    Service bank = new BankService().get();
    try (EmbeddedCluster c = EmbeddedCluster.newBuilder().nodes(3).partitions(2).oracle(true)
        .options(NodeOptions.newBuilder().electionTimeoutMs(600, 1200).build()).app(bank).start()) {
      c.awaitLeaders(Duration.ofSeconds(60));
      Map<Integer, NodeHttp> endpoints = new TreeMap<>();
      try {
        for (int id : c.runningNodes().keySet()) {
          endpoints.put(id, NodeHttp.start(c.node(id), "127.0.0.1", 0));
        }
        try (Client client = Client.newBuilder().cluster(c.cluster()).service(bank).build()) {
          io.micrometer.prometheusmetrics.PrometheusMeterRegistry clientRegistry =
              new io.micrometer.prometheusmetrics.PrometheusMeterRegistry(
                  io.micrometer.prometheusmetrics.PrometheusConfig.DEFAULT);
          new ClientMetrics(client, "test").bindTo(clientRegistry);
          for (int i = 0; i < 6; i++) {
            assertTrue(client.sendCreate(Command.create(ObjId.valueOf(i), 100L)).get(60, TimeUnit.SECONDS).isOk());
          }
          assertTrue(clientRegistry.scrape().contains("eyrie_client_commands_total{client=\"test\"} 6.0"),
              clientRegistry.scrape());
          assertTrue(clientRegistry.scrape().contains("eyrie_client_cached_locations{client=\"test\"} "),
              clientRegistry.scrape());
        }
        Path file = dir.resolve("cluster.conf");
        Files.writeString(file, c.cluster().toText());

        // Before: every group led, 6 objects in all, object 3 located, a clean audit.
        String[] status = run("status", "--cluster", file.toString(), "--locate", "3");
        System.out.println("eyrie status before the kill:\n" + status[1]);
        assertEquals("0", status[0], status[1] + status[2]);
        assertTrue(status[1].contains("object 3: in p"), status[1]);
        assertEquals(6, objects(status[1]), status[1]);
        int leader = c.leaderOf(P0);
        assertTrue(status[1].contains("p0  partition  leader n" + leader + " "), status[1]);
        long termBefore = term(status[1], "p0");
        String[] audit = run("audit", "--cluster", file.toString());
        assertEquals("0", audit[0], audit[1] + audit[2]);
        assertTrue(audit[1].contains("clean"), audit[1]);

        String metrics = get(endpoints.get(leader).port(), "/metrics").body();
        assertEquals(1.0, metric(metrics, "eyrie_raft_leader", "p0", leader), metrics);
        assertTrue(metric(metrics, "eyrie_executions_total", "p0", leader) >= 1, metrics);
        assertTrue(metrics.contains("ratis_"), "Ratis's own metrics are exported");
        boolean latencies = false;
        for (NodeHttp e : endpoints.values()) {
          latencies |= get(e.port(), "/metrics").body().contains("eyrie_requests_seconds_bucket{");
        }
        assertTrue(latencies, "some node answered the creates and has a latency histogram");
        assertTrue(metrics.contains("eyrie_channel_backlog{"), "the channel backlog gauge");
        Waits.until(Duration.ofSeconds(30), () -> ready(endpoints.get(leader).port()), () -> "node ready");

        // Kill the leader of p0: status reports it unreachable and another leader in a newer
        // term; the survivors' metrics follow the new leader.
        endpoints.remove(leader).close();
        c.kill(leader);
        int survivor = endpoints.keySet().iterator().next();
        String[] after = new String[1];
        Waits.until(Duration.ofSeconds(60), () -> {
          after[0] = run("status", "--cluster", file.toString())[1];
          return after[0].contains("p0  partition  leader n") && !after[0].contains("leader n" + leader + " ")
              && !after[0].contains("p0  partition  leader NONE");
        }, () -> "a new leader of p0 in:\n" + after[0]);
        System.out.println("eyrie status after killing node " + leader + ":\n" + after[0]);
        assertTrue(after[0].contains("n" + leader + "   unreachable"), after[0]);
        assertTrue(term(after[0], "p0") > termBefore, after[0]);
        int newLeader = c.leaderOf(P0);
        Waits.until(Duration.ofSeconds(30), () -> {
          String m = get(endpoints.get(survivor).port(), "/metrics").body();
          return metric(m, "eyrie_raft_leader_node", "p0", survivor) == newLeader
              && metric(m, "eyrie_raft_term", "p0", survivor) > termBefore;
        }, () -> "the survivor's metrics show the new leader " + newLeader);
      } finally {
        endpoints.values().forEach(NodeHttp::close);
      }
    }
  }

  private static String[] run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = EyrieMain.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new String[] {Integer.toString(code), out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8)};
  }

  private static int objects(String status) {
    Matcher m = Pattern.compile("p\\d+=(\\d+)").matcher(status.substring(status.indexOf("objects:")));
    int sum = 0;
    while (m.find()) {
      sum += Integer.parseInt(m.group(1));
    }
    return sum;
  }

  private static long term(String status, String group) {
    Matcher m = Pattern.compile("(?m)^" + group + " .* term (\\d+)").matcher(status);
    assertTrue(m.find(), status);
    return Long.parseLong(m.group(1));
  }

  /** The value of a metric with the group and node tags, or NaN if absent. */
  private static double metric(String text, String name, String group, int node) {
    for (String line : text.split("\n")) {
      if (line.startsWith(name + "{") && line.contains("group=\"" + group + "\"") && line.contains("node=\"" + node + "\"")) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return Double.NaN;
  }

  private boolean ready(int port) {
    return get(port, "/ready").statusCode() == 200;
  }

  private HttpResponse<String> get(int port, String path) {
    try {
      return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(10))
          .build(), HttpResponse.BodyHandlers.ofString());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
