package io.eyrie.multicast;

import io.eyrie.multicast.internal.RatisSupport;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.util.TimeDuration;

/**
 * Read-only questions an operator or a test harness asks a running cluster over the network,
 * without hosting a replica: which node leads each group.
 */
public final class ClusterAdmin {
  private ClusterAdmin() {}

  /**
   * Asks every member of every group, over the network, whether it leads. A server that does not
   * answer within the timeout (killed, paused, partitioned away) counts as not leading. When two
   * members say they lead (an old leader that has not yet noticed), the one that became leader
   * last wins.
   *
   * @param cluster the cluster
   * @param timeoutMs how long to wait for each server
   * @return group name to leader node id (0 when no member says it leads), by group name
   */
  public static Map<String, Integer> leaders(ClusterConfig cluster, long timeoutMs) {
    RaftProperties p = new RaftProperties();
    RaftConfigKeys.Rpc.setType(p, SupportedRpcType.NETTY);
    RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(timeoutMs, TimeUnit.MILLISECONDS));
    Map<String, List<CompletableFuture<long[]>>> asked = new TreeMap<>();
    List<RaftClient> clients = new ArrayList<>();
    try {
      for (GroupId g : cluster.groups().keySet()) {
        RaftClient client = RaftClient.newBuilder()
            .setProperties(p)
            .setRaftGroup(RatisSupport.raftGroup(cluster, g))
            .setRetryPolicy(RetryPolicies.noRetry())
            .build();
        clients.add(client);
        List<CompletableFuture<long[]>> answers = new ArrayList<>();
        for (int m : cluster.group(g).members()) {
          answers.add(CompletableFuture.supplyAsync(() -> {
            try {
              GroupInfoReply r = client.getGroupManagementApi(RatisSupport.peerId(m)).info(RatisSupport.raftGroupId(g));
              boolean leads = r.getRoleInfoProto().getRole() == RaftPeerRole.LEADER;
              return leads ? new long[] {m, -r.getRoleInfoProto().getRoleElapsedTimeMs()} : null;
            } catch (IOException | RuntimeException e) {
              return null;
            }
          }));
        }
        asked.put(g.name(), answers);
      }
      Map<String, Integer> out = new TreeMap<>();
      for (Map.Entry<String, List<CompletableFuture<long[]>>> e : asked.entrySet()) {
        int leader = 0;
        long best = Long.MIN_VALUE;
        for (CompletableFuture<long[]> f : e.getValue()) {
          long[] a;
          try {
            a = f.get(timeoutMs + 2000, TimeUnit.MILLISECONDS);
          } catch (Exception ex) {
            a = null;
          }
          if (a != null && a[1] > best) {
            leader = (int) a[0];
            best = a[1];
          }
        }
        out.put(e.getKey(), leader);
      }
      return out;
    } finally {
      for (RaftClient c : clients) {
        try {
          c.close();
        } catch (IOException ignored) {
          // closing a client that could not connect
        }
      }
    }
  }
}
