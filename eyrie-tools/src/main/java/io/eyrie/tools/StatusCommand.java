package io.eyrie.tools;

import io.eyrie.core.Client;
import io.eyrie.core.ObjId;
import io.eyrie.core.PartitionStats;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.GroupStatus;
import java.io.PrintStream;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * {@code eyrie status}: what the cluster's Raft servers say about each group (leader, term,
 * commit and applied index, each replica's lag) and, through the client endpoints, how many
 * objects each partition holds and where one object lives.
 */
final class StatusCommand implements Command {

  @Override
  public String name() {
    return "status";
  }

  @Override
  public String summary() {
    return "leaders, indexes and lag per group, objects per partition, where an object lives";
  }

  @Override
  public String usage() {
    return """
        usage: eyrie status --cluster FILE [--locate ID] [--timeout 3s] [--format text|json] [--as NAME]
                            [--raft-transport netty|grpc]

          --cluster FILE   the cluster file
          --locate ID      also print the partition the oracle places object ID in
          --timeout D      how long to wait for each server (default 3s)
          --format F       text (default) or json: the same facts as one JSON object
          --raft-transport T  the nodes' Raft transport (raft.transport): netty (default) or grpc
        """ + Tools.AS_USAGE + """

        Per group: its Ratis group id (for ratis-shell), the leader and its term, the group's
        commit index, and per replica its role, applied index and lag (committed entries not yet
        applied; "unreachable" for a server that did not answer). Then the objects each partition
        holds. Exit code 0 if every group has a leader, 1 if one has none.""";
  }

  @Override
  public Set<String> valued() {
    return Set.of("cluster", "locate", "timeout", "format", Tools.AS, "raft-transport");
  }

  @Override
  public int run(Args a, PrintStream out, PrintStream err) throws Exception {
    a.noPositional();
    boolean json = "json".equals(a.choice("format", "text", "text", "json"));
    long timeoutMs = a.duration("timeout", Duration.ofSeconds(3), Duration.ofMillis(100)).toMillis();
    ClusterConfig file = Tools.cluster(a);
    io.eyrie.multicast.TlsConfig tls = Tools.tls(a, file);
    ClusterConfig cluster = Tools.view(file, tls, timeoutMs); // with the partitions added since
    Long locate = a.has("locate") ? a.longValue("locate", 0) : null;
    io.eyrie.multicast.NodeOptions.RaftTransport transport = io.eyrie.multicast.NodeOptions.RaftTransport.of(
        a.choice("raft-transport", "netty", "netty", "grpc"));
    List<GroupStatus> groups = GroupStatus.query(cluster, timeoutMs, tls, transport);
    if (!json) {
      printGroups(out, cluster, groups); // before the client connects, which may fail
    }
    Map<GroupId, Long> objects = new LinkedHashMap<>();
    StatusJson.Location located = null;
    if (cluster.oracle() != null && !cluster.partitions().isEmpty()) {
      try (Client client = Client.newBuilder().cluster(cluster).tls(tls).totalTimeoutMs(timeoutMs).build()) {
        for (GroupId p : cluster.partitions()) {
          try {
            objects.put(p, client.partitionStats(p).get(timeoutMs + 1000, TimeUnit.MILLISECONDS).objects());
          } catch (Exception e) {
            objects.put(p, null);
          }
        }
        if (locate != null) {
          try {
            GroupId where = client.locationOf(ObjId.valueOf(locate)).get(timeoutMs + 1000, TimeUnit.MILLISECONDS);
            located = new StatusJson.Location(locate, where, null);
          } catch (Exception e) {
            located = new StatusJson.Location(locate, null, CommandLine.unwrap(e).toString());
          }
        }
      }
    }
    boolean allLed = groups.stream().allMatch(g -> g.leader() != 0);
    if (json) {
      out.println(StatusJson.render(cluster, groups, objects, located, allLed));
    } else {
      printObjects(out, objects, located);
    }
    return allLed ? 0 : 1;
  }

  private static void printGroups(PrintStream out, ClusterConfig cluster, List<GroupStatus> groups) {
    for (GroupStatus g : groups) {
      out.printf("%s  %s  leader %s  term %d  commit %d  (ratis group %s)%n", g.group(),
          cluster.group(g.group()).kind().name().toLowerCase(), g.leader() == 0 ? "NONE" : "n" + g.leader(),
          g.term(), g.commitIndex(), g.raftGroupId());
      for (GroupStatus.Replica r : g.replicas()) {
        if (r.reachable()) {
          out.printf("  n%-3d %-9s applied %-8d lag %-6d last %-8d snapshot %d%n", r.node(), r.role().toLowerCase(),
              r.appliedIndex(), g.lag(r), r.lastIndex(), r.snapshotIndex());
        } else {
          out.printf("  n%-3d unreachable%n", r.node());
        }
      }
    }
  }

  private static void printObjects(PrintStream out, Map<GroupId, Long> objects, StatusJson.Location located) {
    if (!objects.isEmpty()) {
      StringBuilder b = new StringBuilder("objects:");
      objects.forEach((p, n) -> b.append(' ').append(p).append('=').append(n == null ? "?" : n.toString()));
      out.println(b);
    }
    if (located != null) {
      String id = "object " + located.object() + ": ";
      if (located.error() != null) {
        out.println(id + "the oracle did not answer (" + located.error() + ")");
      } else {
        out.println(id + (located.partition() == null ? "unknown to the oracle" : "in " + located.partition()));
      }
    }
  }
}
