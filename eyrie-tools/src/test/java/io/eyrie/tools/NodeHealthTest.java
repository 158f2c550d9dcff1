package io.eyrie.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.eyrie.multicast.EchoDeliverers;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.multicast.testing.Waits;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Owns the check of {@code /health} (liveness) against {@code /ready}: on a node of a 3-node
 * cluster whose two other nodes are killed, {@code /ready} turns 503 (its group has no majority,
 * so no leader) while {@code /health} keeps answering 200.
 */
@Timeout(180)
class NodeHealthTest {
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private HttpResponse<String> get(int port, String path) {
    try {
      return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
          .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  @Timeout(180)
  void healthAnswersWhileReadyDoesNot() throws Exception {
    try (EmbeddedCluster c = EmbeddedCluster.newBuilder().nodes(3).partitions(1).replication(3)
        .options(NodeOptions.newBuilder().electionTimeoutMs(600, 1200).build())
        .deliverers(new EchoDeliverers()).start();
        NodeHttp endpoint = NodeHttp.start(c.node(1), "127.0.0.1", 0)) {
      int port = endpoint.port();
      HttpResponse<String> health = get(port, "/health");
      assertEquals(200, health.statusCode(), health.body());
      assertEquals("alive\n", health.body());

      c.awaitLeaders(Duration.ofSeconds(60));
      Waits.until(Duration.ofSeconds(30), () -> get(port, "/ready").statusCode() == 200, () -> "ready");
      assertEquals(200, get(port, "/health").statusCode());

      // Without a majority, node 1's groups lose their leader: not ready, still alive.
      c.kill(2);
      c.kill(3);
      String[] why = new String[1];
      Waits.until(Duration.ofSeconds(90), () -> {
        HttpResponse<String> ready = get(port, "/ready");
        why[0] = ready.body();
        return ready.statusCode() == 503;
      }, () -> "/ready turns 503 without a majority; last: " + why[0]);
      health = get(port, "/health");
      assertEquals(200, health.statusCode(), health.body());
      HttpResponse<String> ready = get(port, "/ready");
      assertEquals(503, ready.statusCode(), ready.body());
      assertEquals(200, get(port, "/health").statusCode());
      assertEquals(405, http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
          .POST(HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(10)).build(),
          HttpResponse.BodyHandlers.ofString()).statusCode());
    }
  }
}
