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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.thirdparty.com.google.gson.JsonElement;
import org.apache.ratis.thirdparty.com.google.gson.JsonObject;
import org.apache.ratis.thirdparty.com.google.gson.JsonParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Owns the check of {@code eyrie status --format json} against a running 3-node embedded
 * cluster: the output parses (with Ratis's shaded Gson, a parser independent of the writer) and
 * its leaders, terms, objects and location are what the cluster and the text output say; a
 * killed node shows as unreachable.
 */
@Timeout(240)
class StatusJsonTest {

  @Test
  @Timeout(240)
  void statusJsonMatchesTheCluster(@TempDir Path dir) throws Exception {
    Service bank = new BankService().get();
    try (EmbeddedCluster c = EmbeddedCluster.newBuilder().nodes(3).partitions(2).oracle(true)
        .options(NodeOptions.newBuilder().electionTimeoutMs(600, 1200).build()).app(bank).start()) {
      c.awaitLeaders(Duration.ofSeconds(60));
      GroupId where3;
      try (Client client = Client.newBuilder().cluster(c.cluster()).service(bank).build()) {
        for (int i = 0; i < 5; i++) {
          assertTrue(client.sendCreate(Command.create(ObjId.valueOf(i), 100L)).get(60, TimeUnit.SECONDS).isOk());
        }
        where3 = client.locationOf(ObjId.valueOf(3)).get(30, TimeUnit.SECONDS);
      }
      Path file = dir.resolve("cluster.conf");
      Files.writeString(file, c.cluster().toText());

      String[] run = run("status", "--cluster", file.toString(), "--locate", "3", "--format", "json");
      assertEquals("0", run[0], run[1] + run[2]);
      assertEquals(1, run[1].strip().lines().count(), "one JSON object on one line: " + run[1]);
      JsonObject s = JsonParser.parseString(run[1]).getAsJsonObject();
      assertTrue(s.get("allLed").getAsBoolean(), run[1]);
      Set<String> names = new HashSet<>();
      String text = run("status", "--cluster", file.toString())[1];
      for (JsonElement e : s.getAsJsonArray("groups")) {
        JsonObject g = e.getAsJsonObject();
        String name = g.get("group").getAsString();
        names.add(name);
        int leader = g.get("leader").getAsInt();
        assertEquals(c.leaderOf(GroupId.valueOf(name)), leader, run[1]);
        assertTrue(text.contains(name + "  " + g.get("kind").getAsString() + "  leader n" + leader + "  term "
            + g.get("term").getAsLong() + " "), "text and JSON agree on " + name + ":\n" + text + "\n" + run[1]);
        assertTrue(g.get("raftGroupId").getAsString().length() > 0);
        assertEquals(3, g.getAsJsonArray("replicas").size(), run[1]);
        int leaders = 0;
        for (JsonElement re : g.getAsJsonArray("replicas")) {
          JsonObject r = re.getAsJsonObject();
          assertTrue(r.get("reachable").getAsBoolean(), run[1]);
          assertTrue(r.get("lag").getAsLong() >= 0);
          assertTrue(r.get("appliedIndex").getAsLong() >= 0, run[1]);
          leaders += "leader".equals(r.get("role").getAsString()) ? 1 : 0;
          if ("leader".equals(r.get("role").getAsString())) {
            assertEquals(leader, r.get("node").getAsInt(), run[1]);
          }
        }
        assertEquals(1, leaders, run[1]);
      }
      Set<String> expected = new HashSet<>();
      c.cluster().groupIds().forEach(g -> expected.add(g.name()));
      assertEquals(expected, names, run[1]);
      JsonObject objects = s.getAsJsonObject("objects");
      assertEquals(5, objects.get("p0").getAsInt() + objects.get("p1").getAsInt(), run[1]);
      JsonObject locate = s.getAsJsonObject("locate");
      assertEquals(3, locate.get("object").getAsLong());
      assertEquals(where3.name(), locate.get("partition").getAsString(), run[1]);
      assertTrue(locate.get("error").isJsonNull(), run[1]);

      // A killed node: unreachable in every group, every group still led (by the other two).
      c.kill(3);
      String[] last = new String[1];
      Waits.until(Duration.ofSeconds(60), () -> {
        String[] r = run("status", "--cluster", file.toString(), "--format", "json");
        last[0] = r[1];
        JsonObject after = JsonParser.parseString(r[1]).getAsJsonObject();
        for (JsonElement e : after.getAsJsonArray("groups")) {
          for (JsonElement re : e.getAsJsonObject().getAsJsonArray("replicas")) {
            JsonObject rep = re.getAsJsonObject();
            if (rep.get("node").getAsInt() == 3 && rep.get("reachable").getAsBoolean()) {
              return false;
            }
          }
        }
        return "0".equals(r[0]) && after.get("allLed").getAsBoolean();
      }, () -> "node 3 unreachable, every group led: " + last[0]);
      JsonObject after = JsonParser.parseString(last[0]).getAsJsonObject();
      for (JsonElement re : after.getAsJsonArray("groups").get(0).getAsJsonObject().getAsJsonArray("replicas")) {
        JsonObject rep = re.getAsJsonObject();
        assertEquals(rep.get("node").getAsInt() != 3, rep.has("role"), "an unreachable replica has no role: " + last[0]);
      }
    }
  }

  @Test
  @Timeout(10)
  void stringsAreEscaped() {
    String odd = "a\"b\\c\nd\te\u0001f/é";
    assertEquals(odd, JsonParser.parseString(StatusJson.str(odd)).getAsString());
  }

  @Test
  @Timeout(30)
  void aBadFormatIsAUsageError() {
    String[] r = run("status", "--cluster", "nowhere.conf", "--format", "yaml");
    assertEquals("2", r[0], r[1] + r[2]);
    assertTrue(r[2].contains("--format"), r[2]);
  }

  private static String[] run(String... args) {
    return EyrieRuns.run(args);
  }
}
