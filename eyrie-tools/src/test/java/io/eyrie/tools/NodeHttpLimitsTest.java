package io.eyrie.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.EchoDeliverers;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.multicast.testing.RawConnection;
import io.eyrie.multicast.testing.Waits;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The operator's HTTP endpoint and the client endpoint's limits on a running one-node cluster:
 * slow and half-open HTTP connections do not stop {@code /ready} or {@code /metrics} for another
 * client, and every limit that fires moves its counter in {@code /metrics}.
 */
@Timeout(120)
class NodeHttpLimitsTest {
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private static EmbeddedCluster cluster(NodeOptions.Builder options) {
    EmbeddedCluster c = EmbeddedCluster.newBuilder().nodes(1).partitions(1).replication(1)
        .options(options.build()).deliverers(new EchoDeliverers()).start();
    c.awaitLeaders(Duration.ofSeconds(60));
    return c;
  }

  private HttpResponse<String> get(int port, String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private static double metric(String scrape, String name, String labelPart) {
    Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "\\{([^}]*)\\} (\\S+)$").matcher(scrape);
    while (m.find()) {
      if (m.group(1).contains(labelPart)) {
        return Double.parseDouble(m.group(2));
      }
    }
    throw new AssertionError("no " + name + " with " + labelPart + " in\n" + scrape);
  }

  @Test
  void slowAndHalfOpenConnectionsDoNotStopReady() throws Exception {
    try (EmbeddedCluster c = cluster(NodeOptions.newBuilder());
        NodeHttp endpoint = NodeHttp.start(c.node(1), "127.0.0.1", 0, new NodeHttp.Limits(800, 16))) {
      int port = endpoint.port();
      Waits.until(Duration.ofSeconds(30), () -> {
        try {
          return get(port, "/ready").statusCode() == 200;
        } catch (Exception e) {
          return false;
        }
      }, () -> "ready");
      List<Socket> slow = new ArrayList<>();
      try {
        // Half a request line, headers without their end, a request that promises a body it
        // never sends, and a connection that sends nothing at all.
        String[] partial = {"GET /rea", "GET /ready HTTP/1.1\r\nHost: x\r\n",
            "POST /ready HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nab", ""};
        for (String p : partial) {
          Socket s = RawConnection.loopback(port, null);
          slow.add(s);
          OutputStream out = s.getOutputStream();
          out.write(p.getBytes(StandardCharsets.US_ASCII));
          out.flush();
        }
        for (int i = 0; i < 3; i++) {
          HttpResponse<String> ready = get(port, "/ready");
          assertEquals(200, ready.statusCode(), ready.body());
          assertEquals("ready\n", ready.body());
        }
        HttpResponse<String> metrics = get(port, "/metrics");
        assertEquals(200, metrics.statusCode());
        // The connections that started a request and stalled are closed after the timeout.
        for (int i = 0; i < 3; i++) {
          assertTrue(RawConnection.closedByPeer(slow.get(i)), "a stalled request is closed: " + partial[i]);
        }
        String scrape = get(port, "/metrics").body();
        assertTrue(metric(scrape, "eyrie_http_timeouts_total", "node=\"1\"") >= 3, scrape);
      } finally {
        for (Socket s : slow) {
          s.close();
        }
      }
    }
  }

  @Test
  void theHttpConnectionCapRefusesNewOnesWhileOthersAreServed() throws Exception {
    try (EmbeddedCluster c = cluster(NodeOptions.newBuilder());
        NodeHttp endpoint = NodeHttp.start(c.node(1), "127.0.0.1", 0, new NodeHttp.Limits(30_000, 3))) {
      int port = endpoint.port();
      List<Socket> held = new ArrayList<>();
      try {
        for (int i = 0; i < 3; i++) {
          held.add(RawConnection.loopback(port, null));
        }
        Waits.until(Duration.ofSeconds(10), () -> endpoint.connections() == 3, () -> "three connections open");
        try (Socket over = RawConnection.loopback(port, null)) {
          assertTrue(RawConnection.closedByPeer(over), "over the cap: closed at accept");
        }
        // Keep-alive: a connection that was let in keeps being served.
        Socket s = held.get(0);
        s.getOutputStream().write("GET /ready HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        byte[] head = new byte[12];
        int n = s.getInputStream().readNBytes(head, 0, head.length);
        assertEquals("HTTP/1.1 200", new String(head, 0, n, StandardCharsets.US_ASCII));
        held.remove(2).close();
        Waits.until(Duration.ofSeconds(10), () -> endpoint.connections() == 2, () -> "one connection closed");
        HttpResponse<String> metrics = get(port, "/metrics");
        assertEquals(200, metrics.statusCode());
        assertEquals(1.0, metric(metrics.body(), "eyrie_http_refused_total", "node=\"1\""), metrics.body());
      } finally {
        for (Socket s : held) {
          s.close();
        }
      }
    }
  }

  @Test
  void theClientEndpointsLimitsCountInMetrics() throws Exception {
    try (EmbeddedCluster c = cluster(NodeOptions.newBuilder().frameIdleTimeoutMs(300)
        .maxClientConnectionsPerAddress(3));
        NodeHttp endpoint = NodeHttp.start(c.node(1), "127.0.0.1", 0)) {
      int clientPort = c.cluster().node(1).clientPort();
      String before = get(endpoint.port(), "/metrics").body();
      assertEquals(0.0, metric(before, "eyrie_endpoint_frame_timeouts_total", "node=\"1\""));
      assertEquals(0.0, metric(before, "eyrie_endpoint_refused_total", "reason=\"address_cap\""));
      try (Socket half = RawConnection.loopback(clientPort, null)) {
        half.getOutputStream().write(new byte[] {0, 0, 0, 100, 1, 2});
        half.getOutputStream().flush();
        assertTrue(RawConnection.closedByPeer(half), "a half-sent frame is closed");
      }
      List<Socket> many = new ArrayList<>();
      try {
        for (int i = 0; i < 3; i++) {
          many.add(RawConnection.loopback(clientPort, "127.0.0.7"));
        }
        try (Socket over = RawConnection.loopback(clientPort, "127.0.0.7")) {
          assertTrue(RawConnection.closedByPeer(over), "over the address cap: refused");
        }
        String after = get(endpoint.port(), "/metrics").body();
        assertEquals(1.0, metric(after, "eyrie_endpoint_frame_timeouts_total", "node=\"1\""), after);
        assertEquals(1.0, metric(after, "eyrie_endpoint_refused_total", "reason=\"address_cap\""), after);
        assertEquals(0.0, metric(after, "eyrie_endpoint_refused_total", "reason=\"node_cap\""), after);
        assertTrue(metric(after, "eyrie_endpoint_connections", "node=\"1\"") >= 3, after);
        assertNotNull(c.node(1).endpointStats());
      } finally {
        for (Socket s : many) {
          s.close();
        }
      }
    }
  }
}
