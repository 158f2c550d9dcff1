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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code eyrie partition} against a running 3-node bank cluster (real Ratis groups on loopback):
 * add a partition the cluster file does not have, see new objects go there, drain a partition
 * of the file, and audit the result, all through the command line.
 */
@Timeout(240)
class PartitionCommandTest {

  @Test
  void addListDrainAndAuditThroughTheCommandLine(@TempDir Path dir) throws Exception {
    Service bank = new BankService().get();
    try (EmbeddedCluster c = EmbeddedCluster.newBuilder().nodes(3).partitions(2).oracle(true)
        .options(NodeOptions.newBuilder().electionTimeoutMs(600, 1200).build()).app(bank).start();
        Client client = Client.newBuilder().cluster(c.cluster()).service(bank).build()) {
      c.awaitLeaders(Duration.ofSeconds(60));
      for (int i = 0; i < 8; i++) {
        assertTrue(client.sendCreate(Command.create(ObjId.valueOf(i), 100L)).get(60, TimeUnit.SECONDS).isOk());
      }
      Path file = dir.resolve("cluster.conf");
      Files.writeString(file, c.cluster().toText());
      String f = file.toString();

      String[] bad = run("partition", "grow", "--cluster", f);
      assertEquals("2", bad[0], "an unknown verb is a usage error: " + bad[2]);
      bad = run("partition", "add", "--cluster", f);
      assertEquals("2", bad[0], "add needs --group: " + bad[2]);

      try (NodeHttp http = NodeHttp.start(c.node(1), "127.0.0.1", 0)) {
        String[] add = run("partition", "add", "--cluster", f, "--group", "p2", "--members", "1,2,3");
        assertEquals("0", add[0], add[1] + add[2]);
        assertTrue(add[1].matches("(?s).*p2\\s+ACTIVE\\s+0 objects.*"), add[1]);
        // The node's /metrics, bound before the group existed, shows the added group.
        io.eyrie.multicast.testing.Waits.until(Duration.ofSeconds(30),
            () -> scrape(http.port()).matches("(?s).*eyrie_raft_term\\{[^}]*group=\"p2\".*"),
            () -> "metrics of the added group p2");
      }
      for (int i = 8; i < 12; i++) {
        assertTrue(client.sendCreate(Command.create(ObjId.valueOf(i), 100L)).get(60, TimeUnit.SECONDS).isOk());
      }
      String[] list = run("partition", "list", "--cluster", f);
      assertEquals("0", list[0], list[2]);
      assertTrue(list[1].matches("(?s).*p2\\s+ACTIVE\\s+4 objects.*"), "the empty new partition took the new objects: "
          + list[1]);

      String[] drain = run("partition", "drain", "--cluster", f, "--group", "p0", "--batch", "3", "--timeout", "90s");
      assertEquals("0", drain[0], drain[1] + drain[2]);
      assertTrue(drain[1].matches("(?s).*p0\\s+DRAINED\\s+0 objects.*"), drain[1]);
      assertEquals(GroupId.valueOf("p0").equals(client.locationOf(ObjId.valueOf(0)).get(30, TimeUnit.SECONDS)), false);

      String[] retireLast = run("partition", "retire", "--cluster", f, "--group", "p1");
      assertEquals("0", retireLast[0], retireLast[2]);
      retireLast = run("partition", "retire", "--cluster", f, "--group", "p2");
      assertEquals("1", retireLast[0], "the last active partition cannot be retired: " + retireLast[1]);
      assertTrue(retireLast[2].contains("last active"), retireLast[2]);

      String[] audit = run("audit", "--cluster", f);
      assertEquals("0", audit[0], audit[1] + audit[2]);
      assertTrue(audit[1].contains("p2=") && audit[1].contains("p0=0"), "the audit covers the added partition: "
          + audit[1]);
    }
  }

  private static String scrape(int port) {
    try {
      return java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
          java.net.URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
          java.net.http.HttpResponse.BodyHandlers.ofString()).body();
    } catch (java.io.IOException e) {
      return "";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "";
    }
  }

  private static String[] run(String... args) {
    return EyrieRuns.run(args);
  }
}
