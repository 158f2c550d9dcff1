package io.eyrie.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Reply;
import io.eyrie.core.Service;
import io.eyrie.examples.kv.KvOps;
import io.eyrie.examples.kv.KvService;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.GroupStatus;
import io.eyrie.multicast.testing.Waits;
import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three {@code eyrie node --service CLASS} processes (what bin/eyrie runs, with this test's
 * class path) host the example key-value service; a client drives it; {@code --version} comes from the build;
 * a node stopped with SIGTERM hands the leadership of the groups it led to the others before it
 * exits, and the service keeps answering.
 */
@Timeout(300)
class NodeLauncherProcessTest {
  private final Map<Integer, Process> nodes = new TreeMap<>();

  @Test
  void threeNodeProcessesHostAServiceAndHandOffLeadershipOnStop(@TempDir Path dir) throws Exception {
    List<Integer> ports = freePorts(9);
    StringBuilder conf = new StringBuilder();
    for (int i = 1; i <= 3; i++) {
      conf.append("node ").append(i).append(" 127.0.0.1 raft=").append(ports.get(i - 1)).append(" client=")
          .append(ports.get(2 + i)).append(" metrics=").append(ports.get(5 + i)).append('\n');
    }
    conf.append("group oracle oracle 1,2,3\ngroup p0 partition 1,2,3\ngroup p1 partition 1,2,3\n");
    Path file = dir.resolve("cluster.conf");
    Files.writeString(file, conf);
    ClusterConfig cluster = ClusterConfig.load(file);
    try {
      for (int id = 1; id <= 3; id++) {
        start(id, file, dir);
      }
      for (int id = 1; id <= 3; id++) {
        int node = id;
        Waits.until(Duration.ofSeconds(90), () -> log(dir, node).contains("eyrie node " + node + " up:"),
            () -> "node " + node + " up:\n" + log(dir, node));
      }
      Waits.until(Duration.ofSeconds(60), () -> GroupStatus.query(cluster, 2000).stream().allMatch(g -> g.leader() != 0),
          () -> "every group has a leader");
      Service kv = new KvService().get();
      try (Client client = Client.newBuilder().cluster(cluster).service(kv).build()) {
        for (int i = 0; i < 4; i++) {
          assertTrue(client.sendCreate(Command.create(ObjId.valueOf(i), "v" + i)).get(60, TimeUnit.SECONDS).isOk());
        }
        assertEquals("v0", client.sendAccess(Command.access(new KvOps.Put("w0"), ObjId.valueOf(0)))
            .get(60, TimeUnit.SECONDS).value(), "a put replies the previous value");
        assertEquals("v1", client.sendAccess(Command.access(new KvOps.Copy(1, 2), ObjId.valueOf(1), ObjId.valueOf(2)))
            .get(60, TimeUnit.SECONDS).value(), "a copy gathers both keys");

        // A node stopped with SIGTERM hands off what it leads, then exits.
        int victim = leaderOf(cluster, GroupId.valueOf("p0"));
        Process p = nodes.get(victim);
        p.destroy();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "node " + victim + " exits on SIGTERM");
        String victimLog = log(dir, victim);
        assertTrue(victimLog.contains("handed the leadership of p0 to node"), victimLog);
        int newLeader = leaderOf(cluster, GroupId.valueOf("p0"));
        assertTrue(newLeader != 0 && newLeader != victim, "p0 is led by another node: " + newLeader);
        client.sendDelete(Command.delete(ObjId.valueOf(3), null)).get(60, TimeUnit.SECONDS);
        assertEquals(Reply.Status.NOT_FOUND, client.sendAccess(Command.access(new KvOps.Get(), ObjId.valueOf(3)))
            .get(60, TimeUnit.SECONDS).status(), "a deleted key is gone");
        for (int i = 0; i < 3; i++) {
          Reply r = client.sendAccess(Command.access(new KvOps.Get(), ObjId.valueOf(i))).get(60, TimeUnit.SECONDS);
          assertEquals(List.of("w0", "v1", "v1").get(i), r.value(), "key " + i);
        }
      }
      int survivor = nodes.keySet().stream().filter(id -> nodes.get(id).isAlive()).findFirst().orElseThrow();
      HttpResponse<String> ready = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + cluster.metricsPort(survivor) + "/metrics")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals(200, ready.statusCode());
      assertTrue(ready.body().contains("eyrie_raft_leader"), ready.body());
    } finally {
      nodes.values().forEach(Process::destroyForcibly);
    }
  }

  @Test
  void versionComesFromTheBuild() throws Exception {
    Process p = new ProcessBuilder(java(), "-cp", System.getProperty("java.class.path"), EyrieMain.class.getName(),
        "--version").redirectErrorStream(true).start();
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    assertEquals(0, p.exitValue(), out);
    // Run from classes there is no manifest; from bin/eyrie's jar it is Implementation-Version.
    assertTrue(out.equals("eyrie development") || out.matches("eyrie \\d+\\.\\d+\\.\\d+.*"), out);
  }

  private static int leaderOf(ClusterConfig cluster, GroupId g) {
    int[] leader = new int[1];
    Waits.until(Duration.ofSeconds(60), () -> {
      for (GroupStatus s : GroupStatus.query(cluster, 2000)) {
        if (s.group().equals(g)) {
          leader[0] = s.leader();
        }
      }
      return leader[0] != 0;
    }, () -> "a leader of " + g);
    return leader[0];
  }

  private void start(int id, Path conf, Path dir) throws IOException {
    ProcessBuilder pb = new ProcessBuilder(java(), "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
        "-cp", System.getProperty("java.class.path"), EyrieMain.class.getName(), "node", "--cluster",
        conf.toString(), "--id", Integer.toString(id), "--service", KvService.class.getName(), "--data",
        dir.resolve("data-" + id).toString());
    pb.redirectErrorStream(true);
    pb.redirectOutput(dir.resolve("node-" + id + ".log").toFile());
    nodes.put(id, pb.start());
  }

  private static String log(Path dir, int id) {
    try {
      return Files.readString(dir.resolve("node-" + id + ".log"), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }

  private static String java() {
    return System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
  }

  private static List<Integer> freePorts(int n) throws IOException {
    List<ServerSocket> sockets = new ArrayList<>();
    List<Integer> ports = new ArrayList<>();
    try {
      for (int i = 0; i < n; i++) {
        ServerSocket s = new ServerSocket(0);
        sockets.add(s);
        ports.add(s.getLocalPort());
      }
    } finally {
      for (ServerSocket s : sockets) {
        s.close();
      }
    }
    return ports;
  }
}
