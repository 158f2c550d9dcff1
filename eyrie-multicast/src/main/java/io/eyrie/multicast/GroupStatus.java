package io.eyrie.multicast;

import io.eyrie.multicast.NodeOptions.RaftTransport;
import io.eyrie.multicast.internal.transport.RatisSupport;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos.LogInfoProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.util.TimeDuration;

/**
 * What the Raft servers of a cluster say about one group: who leads it, in which term, and how
 * far each replica's log has been committed and applied. Asked over the network (Ratis's group
 * info request, the same one {@code ratis sh group info} sends), so it works from any process
 * that can reach the nodes' Raft ports; a replica that does not answer in time (killed, paused,
 * partitioned away) is reported as unreachable.
 *
 * <p>With mutual TLS the Raft ports take only nodes: a node's {@link TlsConfig} asks them
 * itself, any other identity (an admin's) asks one node through its client port, and that node
 * asks the Raft servers ({@link #query(ClusterConfig, long, TlsConfig)}).
 *
 * <pre>{@code
 * for (GroupStatus g : GroupStatus.query(ClusterConfig.load(Path.of("cluster.conf")), 2000)) {
 *   System.out.println(g.group() + " led by node " + g.leader() + " in term " + g.term());
 * }
 * }</pre>
 *
 * @param group the group
 * @param raftGroupId the Ratis group id (a UUID derived from the group's name), for ratis-shell
 * @param leader the node leading the group, 0 when no reachable replica says it leads
 * @param term the leader's term, 0 without a leader
 * @param replicas one entry per member, in node order
 */
public record GroupStatus(GroupId group, String raftGroupId, int leader, long term, List<Replica> replicas) {

  /**
   * One replica of a group as its server reports it.
   *
   * @param node the node hosting it
   * @param reachable false if the server did not answer (the other fields are then 0 or empty)
   * @param role LEADER, FOLLOWER, CANDIDATE, LISTENER, or UNREACHABLE
   * @param commitIndex the highest log index this replica knows to be committed
   * @param appliedIndex the highest log index this replica has applied
   * @param lastIndex the last index of its log
   * @param snapshotIndex the index of its latest snapshot, -1 if none
   */
  public record Replica(int node, boolean reachable, String role, long commitIndex, long appliedIndex,
      long lastIndex, long snapshotIndex) {}

  /** Returns the highest commit index any reachable replica reports (the group's commit index). */
  public long commitIndex() {
    long c = 0;
    for (Replica r : replicas) {
      c = Math.max(c, r.commitIndex());
    }
    return c;
  }

  /**
   * How many committed entries a replica has still to apply: the group's commit index minus the
   * replica's applied index, or -1 if the replica is unreachable.
   *
   * @param r one of this group's replicas
   * @return its lag
   */
  public long lag(Replica r) {
    return r.reachable() ? Math.max(0, commitIndex() - r.appliedIndex()) : -1;
  }

  /** The Ratis group id of a group, as a string (what ratis-shell's {@code -groupid} takes). */
  public static String raftGroupIdOf(GroupId g) {
    return RatisSupport.raftGroupId(g).getUuid().toString();
  }

  /**
   * Asks every member of every group of a cluster, in parallel.
   *
   * @param cluster the cluster
   * @param timeoutMs how long to wait for each server
   * @return one entry per group, in group order
   */
  public static List<GroupStatus> query(ClusterConfig cluster, long timeoutMs) {
    return query(cluster, timeoutMs, null);
  }

  /**
   * Asks every member of every group of a cluster, over mutual TLS as {@code tls}'s identity: a
   * node asks the Raft servers itself; an admin asks a node through its client port, which asks
   * them as a node (a client identity is refused, {@link Status#FORBIDDEN}).
   *
   * @param cluster the cluster
   * @param timeoutMs how long to wait for each server
   * @param tls the identity to ask as, or null for plaintext
   * @return one entry per group, in group order
   * @throws IllegalStateException if the node asked through its client port did not answer or refused
   */
  public static List<GroupStatus> query(ClusterConfig cluster, long timeoutMs, TlsConfig tls) {
    return query(cluster, timeoutMs, tls, RaftTransport.NETTY);
  }

  /**
   * As {@link #query(ClusterConfig, long, TlsConfig)}, to Raft ports that speak {@code transport}
   * (the nodes' {@link NodeOptions#raftTransport()}; the other overloads ask Netty RPC ports).
   *
   * @param cluster the cluster
   * @param timeoutMs how long to wait for each server
   * @param tls the identity to ask as, or null for plaintext
   * @param transport the transport of the nodes' Raft ports
   * @return one entry per group, in group order
   * @throws IllegalStateException if the node asked through its client port did not answer or refused
   */
  public static List<GroupStatus> query(ClusterConfig cluster, long timeoutMs, TlsConfig tls,
      RaftTransport transport) {
    if (tls != null && tls.identity().role() != Identity.Role.NODE) {
      return askANode(cluster, timeoutMs, tls);
    }
    RaftProperties p = new RaftProperties();
    RatisSupport.clientRpc(p, tls, transport);
    RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(timeoutMs, TimeUnit.MILLISECONDS));
    Map<GroupId, List<CompletableFuture<Object[]>>> asked = new TreeMap<>();
    List<RaftClient> clients = new ArrayList<>();
    try {
      for (GroupId g : cluster.groups().keySet()) {
        RaftClient client = RaftClient.newBuilder()
            .setProperties(p)
            .setParameters(RatisSupport.clientParameters(tls, transport))
            .setRaftGroup(RatisSupport.raftGroup(cluster, g))
            .setRetryPolicy(RetryPolicies.noRetry())
            .build();
        clients.add(client);
        List<CompletableFuture<Object[]>> answers = new ArrayList<>();
        for (int m : cluster.group(g).members()) {
          // A thread each, not the common pool, which Ratis needs and these blocking asks would hold.
          answers.add(CompletableFuture.supplyAsync(() -> ask(client, g, m), r -> {
            Thread t = new Thread(r, "eyrie-status-" + g.name() + "-" + m);
            t.setDaemon(true);
            t.start();
          }));
        }
        asked.put(g, answers);
      }
      List<GroupStatus> out = new ArrayList<>();
      for (Map.Entry<GroupId, List<CompletableFuture<Object[]>>> e : asked.entrySet()) {
        List<Replica> replicas = new ArrayList<>();
        int leader = 0;
        long term = 0;
        long newest = Long.MIN_VALUE;
        List<Integer> members = cluster.group(e.getKey()).members();
        for (int i = 0; i < members.size(); i++) {
          Object[] a;
          try {
            a = e.getValue().get(i).get(timeoutMs + 2000, TimeUnit.MILLISECONDS);
          } catch (Exception ex) {
            a = unreachable(members.get(i));
          }
          Replica r = (Replica) a[0];
          replicas.add(r);
          // Two members may both say they lead (an old leader that has not noticed yet): the
          // higher term wins.
          long leaderTerm = (Long) a[1];
          if (leaderTerm > 0 && leaderTerm > newest) {
            newest = leaderTerm;
            leader = r.node();
            term = leaderTerm;
          }
        }
        out.add(new GroupStatus(e.getKey(), raftGroupIdOf(e.getKey()), leader, term, List.copyOf(replicas)));
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

  /** Asks a node, through its client port, to ask the Raft servers. */
  private static List<GroupStatus> askANode(ClusterConfig cluster, long timeoutMs, TlsConfig tls) {
    long waitMs = 2 * timeoutMs + 10_000;
    try (MulticastClient c = MulticastClient.newBuilder().cluster(cluster).tls(tls).attemptTimeoutMs(waitMs)
        .totalTimeoutMs(waitMs).build()) {
      GroupId any = cluster.groups().keySet().iterator().next();
      Object text = c.status(any).get(waitMs + 1000, TimeUnit.MILLISECONDS);
      return parse((String) text);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      throw new IllegalStateException("no node told the status: " + cause.getMessage(), cause);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new IllegalStateException("no node told the status in " + waitMs + " ms", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while asking for the status", e);
    }
  }

  /** The text form of statuses, which a node answers a status query with ({@link #parse}). */
  static String toText(List<GroupStatus> statuses) {
    StringBuilder b = new StringBuilder();
    for (GroupStatus g : statuses) {
      b.append("g ").append(g.group().name()).append(' ').append(g.raftGroupId()).append(' ').append(g.leader())
          .append(' ').append(g.term()).append('\n');
      for (Replica r : g.replicas()) {
        b.append("r ").append(r.node()).append(' ').append(r.reachable()).append(' ').append(r.role()).append(' ')
            .append(r.commitIndex()).append(' ').append(r.appliedIndex()).append(' ').append(r.lastIndex())
            .append(' ').append(r.snapshotIndex()).append('\n');
      }
    }
    return b.toString();
  }

  /** Reads {@link #toText}'s form. */
  static List<GroupStatus> parse(String text) {
    List<GroupStatus> out = new ArrayList<>();
    String[] g = null;
    List<Replica> replicas = new ArrayList<>();
    for (String line : (text + "g\n").split("\n")) {
      String[] f = line.split(" ");
      if (f[0].equals("r")) {
        replicas.add(new Replica(Integer.parseInt(f[1]), Boolean.parseBoolean(f[2]), f[3], Long.parseLong(f[4]),
            Long.parseLong(f[5]), Long.parseLong(f[6]), Long.parseLong(f[7])));
      } else if (f[0].equals("g")) {
        if (g != null) {
          out.add(new GroupStatus(GroupId.valueOf(g[1]), g[2], Integer.parseInt(g[3]), Long.parseLong(g[4]),
              List.copyOf(replicas)));
        }
        g = f;
        replicas.clear();
      }
    }
    return out;
  }

  /** Returns {replica, leader term or 0}. */
  private static Object[] ask(RaftClient client, GroupId g, int node) {
    try {
      GroupInfoReply r = client.getGroupManagementApi(RatisSupport.peerId(node)).info(RatisSupport.raftGroupId(g));
      RoleInfoProto role = r.getRoleInfoProto();
      LogInfoProto log = r.getLogInfoProto();
      long leaderTerm = role.getRole() == RaftPeerRole.LEADER && role.hasLeaderInfo() ? role.getLeaderInfo().getTerm() : 0;
      if (role.getRole() == RaftPeerRole.LEADER && leaderTerm == 0) {
        leaderTerm = log.hasLastEntry() ? Math.max(1, log.getLastEntry().getTerm()) : 1;
      }
      return new Object[] {new Replica(node, true, role.getRole().name(),
          log.hasCommitted() ? log.getCommitted().getIndex() : 0,
          log.hasApplied() ? log.getApplied().getIndex() : 0,
          log.hasLastEntry() ? log.getLastEntry().getIndex() : 0,
          log.hasLastSnapshot() ? log.getLastSnapshot().getIndex() : -1), leaderTerm};
    } catch (IOException | RuntimeException e) {
      return unreachable(node);
    }
  }

  private static Object[] unreachable(int node) {
    return new Object[] {new Replica(node, false, "UNREACHABLE", 0, 0, 0, -1), 0L};
  }
}
