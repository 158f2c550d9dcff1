package io.eyrie.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Service;
import io.eyrie.examples.bank.BankService;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.NodeOptions;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.ratis.thirdparty.com.google.gson.JsonElement;
import org.apache.ratis.thirdparty.com.google.gson.JsonObject;
import org.apache.ratis.thirdparty.com.google.gson.JsonParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Owns the check that {@code docs/ops/grafana-dashboard.json} and
 * {@code docs/ops/prometheus-alerts.yml} name only metrics a running node exports: it starts a
 * 3-node embedded cluster with an HTTP endpoint per node, runs a few commands (so that the
 * latency histogram exists), scrapes every {@code /metrics}, and fails on any metric name in
 * the two files' PromQL expressions that no node exports (a renamed metric breaks it).
 */
@Timeout(240)
class OpsMetricsExistTest {
  /** Made by Prometheus itself for each scrape target, not by the node. */
  private static final Set<String> BY_PROMETHEUS = Set.of("up");
  private static final Set<String> KEYWORDS = Set.of("and", "or", "unless", "bool", "offset", "by", "without",
      "on", "ignoring", "group_left", "group_right", "inf", "nan");
  private static final Pattern NAME =
      Pattern.compile("(?<![A-Za-z0-9_:.\"])[A-Za-z_:][A-Za-z0-9_:]*+(?!\\s*\\()");
  private static final Pattern EXPR_LINE = Pattern.compile("(?m)^\\s*expr:\\s*(.+?)\\s*$");

  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @Test
  @Timeout(240)
  void everyMetricTheOpsFilesNameIsExported() throws Exception {
    Path ops = Path.of("..", "docs", "ops");
    List<String> dashboard = dashboardExprs(Files.readString(ops.resolve("grafana-dashboard.json")));
    String alertsText = Files.readString(ops.resolve("prometheus-alerts.yml"));
    List<String> alerts = alertExprs(alertsText);
    assertEquals(count(alertsText, "- alert:"), alerts.size(), "one single-line expr per alert rule");
    Set<String> named = new TreeSet<>();
    Set<String> inDashboard = names(dashboard);
    Set<String> inAlerts = names(alerts);
    named.addAll(inDashboard);
    named.addAll(inAlerts);
    for (String needed : List.of("eyrie_raft_leader", "eyrie_raft_lag", "eyrie_raft_applied_index",
        "eyrie_channel_backlog", "eyrie_endpoint_refused_total")) {
      assertTrue(inDashboard.contains(needed), "the dashboard shows " + needed + ": " + inDashboard);
      assertTrue(inAlerts.contains(needed), "an alert watches " + needed + ": " + inAlerts);
    }

    Service bank = new BankService().get();
    Set<String> exported = new TreeSet<>(BY_PROMETHEUS);
    try (EmbeddedCluster c = EmbeddedCluster.newBuilder().nodes(3).partitions(2).oracle(true)
        .options(NodeOptions.newBuilder().electionTimeoutMs(600, 1200).build()).app(bank).start()) {
      c.awaitLeaders(Duration.ofSeconds(60));
      List<NodeHttp> endpoints = new ArrayList<>();
      try {
        for (int id : c.runningNodes().keySet()) {
          endpoints.add(NodeHttp.start(c.node(id), "127.0.0.1", 0));
        }
        try (Client client = Client.newBuilder().cluster(c.cluster()).service(bank).build()) {
          for (int i = 0; i < 4; i++) {
            assertTrue(client.sendCreate(Command.create(ObjId.valueOf(i), 10L)).get(60, TimeUnit.SECONDS).isOk());
          }
        }
        for (NodeHttp e : endpoints) {
          HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + e.port()
              + "/metrics")).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
          assertEquals(200, r.statusCode());
          exported.addAll(scrapedNames(r.body()));
        }
      } finally {
        endpoints.forEach(NodeHttp::close);
      }
    }
    Set<String> missing = new TreeSet<>(named);
    missing.removeAll(exported);
    assertTrue(missing.isEmpty(), "named in docs/ops but not exported by a node: " + missing);
  }

  @Test
  @Timeout(10)
  void namesAreTakenFromPromQl() {
    assertEquals(Set.of("eyrie_requests_seconds_bucket"),
        names(List.of("histogram_quantile(0.99, sum by (le, group) (rate(eyrie_requests_seconds_bucket[5m])))")));
    assertEquals(Set.of("eyrie_raft_applied_index"), names(List.of(
        "(max by (group) (eyrie_raft_applied_index) - on (group) group_right eyrie_raft_applied_index) > 1e4")));
    assertEquals(Set.of("up", "jvm_memory_used_bytes"),
        names(List.of("up{job=\"eyrie\"} == 0 or sum(jvm_memory_used_bytes{area=\"heap\", id=~\"a(b)\"})")));
  }

  /** The metric names in PromQL expressions: identifiers that are not functions, keywords or labels. */
  static Set<String> names(List<String> exprs) {
    Set<String> out = new TreeSet<>();
    for (String e : exprs) {
      String s = e.replaceAll("\"(?:[^\"\\\\]|\\\\.)*\"", "\"\"")
          .replaceAll("\\{[^}]*\\}", " ")
          .replaceAll("\\[[^\\]]*\\]", " ")
          .replaceAll("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)", " ");
      Matcher m = NAME.matcher(s);
      while (m.find()) {
        if (!KEYWORDS.contains(m.group().toLowerCase(java.util.Locale.ROOT))) {
          out.add(m.group());
        }
      }
    }
    return out;
  }

  private static List<String> dashboardExprs(String json) {
    List<String> out = new ArrayList<>();
    collectExprs(JsonParser.parseString(json), out);
    assertTrue(out.size() >= 4, "the dashboard has queries: " + out);
    return out;
  }

  private static void collectExprs(JsonElement e, List<String> out) {
    if (e.isJsonObject()) {
      JsonObject o = e.getAsJsonObject();
      for (var entry : o.entrySet()) {
        if (entry.getKey().equals("expr") && entry.getValue().isJsonPrimitive()) {
          out.add(entry.getValue().getAsString());
        } else {
          collectExprs(entry.getValue(), out);
        }
      }
    } else if (e.isJsonArray()) {
      e.getAsJsonArray().forEach(x -> collectExprs(x, out));
    }
  }

  private static List<String> alertExprs(String yaml) {
    List<String> out = new ArrayList<>();
    Matcher m = EXPR_LINE.matcher(yaml);
    while (m.find()) {
      String v = m.group(1);
      assertTrue(!v.startsWith("|") && !v.startsWith(">"), "exprs stay on one line: " + v);
      if (v.length() >= 2 && v.startsWith("'") && v.endsWith("'")) {
        v = v.substring(1, v.length() - 1).replace("''", "'");
      }
      out.add(v);
    }
    return out;
  }

  private static Set<String> scrapedNames(String scrape) {
    Set<String> out = new TreeSet<>();
    for (String line : scrape.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      int end = line.length();
      for (char stop : new char[] {'{', ' '}) {
        int i = line.indexOf(stop);
        if (i >= 0) {
          end = Math.min(end, i);
        }
      }
      out.add(line.substring(0, end));
    }
    return out;
  }

  private static int count(String text, String what) {
    int n = 0;
    for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + 1)) {
      n++;
    }
    return n;
  }
}
