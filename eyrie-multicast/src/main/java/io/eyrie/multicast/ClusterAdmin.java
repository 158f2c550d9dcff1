package io.eyrie.multicast;

import io.eyrie.multicast.NodeOptions.RaftTransport;
import java.util.Map;
import java.util.TreeMap;

/**
 * What an operator or a test harness does to a running cluster over the network, without
 * hosting a replica: ask which node leads each group, and add a group.
 */
public final class ClusterAdmin {
  private ClusterAdmin() {}

  /**
   * Asks every member of every group, over the network, whether it leads ({@link
   * GroupStatus#query}). A server that does not answer within the timeout (killed, paused,
   * partitioned away) counts as not leading; when two members say they lead (an old leader that
   * has not yet noticed), the one with the higher term wins.
   *
   * @param cluster the cluster
   * @param timeoutMs how long to wait for each server
   * @return group name to leader node id (0 when no member says it leads), by group name
   */
  public static Map<String, Integer> leaders(ClusterConfig cluster, long timeoutMs) {
    return leaders(cluster, timeoutMs, null);
  }

  /**
   * As {@link #leaders(ClusterConfig, long)}, over mutual TLS as {@code tls}'s identity (a node's
   * asks the Raft ports, an admin's asks a node, {@link GroupStatus#query(ClusterConfig, long,
   * TlsConfig)}).
   *
   * @param cluster the cluster
   * @param timeoutMs how long to wait for each server
   * @param tls the identity to ask as, or null for plaintext
   * @return group name to leader node id (0 when no member says it leads), by group name
   */
  public static Map<String, Integer> leaders(ClusterConfig cluster, long timeoutMs, TlsConfig tls) {
    return leaders(cluster, timeoutMs, tls, RaftTransport.NETTY);
  }

  /**
   * As {@link #leaders(ClusterConfig, long, TlsConfig)}, to Raft ports that speak {@code transport}
   * (the nodes' {@link NodeOptions#raftTransport()}; the other overloads ask Netty RPC ports).
   *
   * @param cluster the cluster
   * @param timeoutMs how long to wait for each server
   * @param tls the identity to ask as, or null for plaintext
   * @param transport the transport of the nodes' Raft ports
   * @return group name to leader node id (0 when no member says it leads), by group name
   */
  public static Map<String, Integer> leaders(ClusterConfig cluster, long timeoutMs, TlsConfig tls,
      RaftTransport transport) {
    Map<String, Integer> out = new TreeMap<>();
    for (GroupStatus g : GroupStatus.query(cluster, timeoutMs, tls, transport)) {
      out.put(g.group().name(), g.leader());
    }
    return out;
  }

  /**
   * Waits, for at most {@code timeout}, until every group is led by its preferred node (where
   * the nodes' leader balancing moves it, {@link NodeOptions}' rotation of groups over nodes).
   * A cluster that has just started moves leaders within seconds of electing them, and requests
   * caught by such a move wait for Ratis retries or a client attempt timeout: a harness that
   * wants to measure or test the steady state starts after this. Nodes that do not answer count
   * as not leading, so with a preferred node down this waits the whole timeout.
   *
   * @param cluster the cluster
   * @param timeout how long to wait in all
   * @return true if every group is led by its preferred node, false if the time ran out first
   */
  public static boolean awaitPreferredLeaders(ClusterConfig cluster, java.time.Duration timeout) {
    return awaitPreferredLeaders(cluster, timeout, null);
  }

  /**
   * As {@link #awaitPreferredLeaders(ClusterConfig, java.time.Duration)}, asking over mutual TLS
   * as {@code tls}'s identity ({@link #leaders(ClusterConfig, long, TlsConfig)}).
   *
   * @param cluster the cluster
   * @param timeout how long to wait in all
   * @param tls the identity to ask as, or null for plaintext
   * @return true if every group is led by its preferred node, false if the time ran out first
   */
  public static boolean awaitPreferredLeaders(ClusterConfig cluster, java.time.Duration timeout, TlsConfig tls) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      Map<String, Integer> leaders;
      try {
        leaders = leaders(cluster, 1000, tls);
      } catch (IllegalStateException e) {
        leaders = Map.of(); // no node told the status (through a client port): not settled yet
      }
      boolean settled = true;
      for (GroupId g : cluster.groupIds()) {
        Integer leader = leaders.get(g.name());
        if (leader == null || leader != io.eyrie.multicast.internal.transport.RatisSupport.preferredLeader(cluster, g)) {
          settled = false;
          break;
        }
      }
      if (settled) {
        return true;
      }
      if (System.nanoTime() >= deadline || Thread.currentThread().isInterrupted()) {
        return false;
      }
      java.util.concurrent.locks.LockSupport.parkNanos(100_000_000L); // poll interval of a bounded wait
    }
  }

  /**
   * Adds a partition group to the running cluster, on existing nodes, while clients keep
   * running. In three steps, each waited for:
   * <ol>
   *   <li>a group change multicast to every group makes the new group <em>known</em>: each
   *       group delivers it at one point of its order, after which it orders and channels
   *       messages naming the group; each node that delivers it learns the group, and its
   *       members create their replicas (a Ratis group add);
   *   <li>once every group, the new one included, answers that it knows the group (linearizable
   *       queries), a second change multicast to all of them makes it <em>open</em>;
   *   <li>once every group answers that it is open, nodes accept client messages naming it.
   * </ol>
   * Opening only after every group knows the group means no group refuses a message naming it
   * that another destination accepted (which would leave that message undecided). The cluster
   * file need not change: each node records the groups it learned in its storage directory. An
   * application learns of the new partition separately (Eyrie's DS-SMR oracle through its own
   * command). Run one addition at a time.
   *
   * <p>An addition that stopped halfway (a step timed out, for example because the new group's
   * members could not elect a leader) leaves the group known but not open. Calling this again
   * with the same group and members resumes it. Adding another group meanwhile is refused: its
   * group changes would go to the open groups only, so the halfway group would never learn it,
   * and completing the halfway addition later would then leave its opening undecided at every
   * group, which stops every group's delivery (review N3).
   *
   * @param client a client of the cluster
   * @param group the new group's name (not in use)
   * @param members the existing nodes that will hold its replicas
   * @param timeout how long to wait in all
   * @return the cluster as the client knows it afterwards
   * @throws IllegalArgumentException if the name is in use by another group or a member is unknown
   * @throws IllegalStateException if another group's addition stopped halfway (finish it first)
   * @throws java.util.concurrent.TimeoutException if a step did not finish in time
   * @throws Exception if a step failed (the cluster refused the change)
   */
  public static ClusterConfig addGroup(MulticastClient client, GroupId group, java.util.List<Integer> members,
      java.time.Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    // The open groups as a node knows them: this client may know a group whose addition it
    // started and which stopped halfway, and that group must not count as open (review N3).
    ClusterConfig view = client.openView().get(remaining(deadline), java.util.concurrent.TimeUnit.NANOSECONDS);
    ClusterConfig.GroupInfo info = new ClusterConfig.GroupInfo(group, ClusterConfig.Kind.PARTITION,
        java.util.List.copyOf(new java.util.TreeSet<>(members)));
    view.withGroup(info); // validates: members exist, the name is free or the same group
    client.cluster().withGroup(info); // and the same group as the one this client may have started to add
    if (view.groups().containsKey(group)) {
      // Open already (at the node asked): wait until every group has opened it.
      awaitEveryGroup(client, view.groupIds(), group, 2, deadline);
      return client.cluster();
    }
    java.util.TreeSet<GroupId> halfway = halfwayGroups(client, view.groupIds(), deadline);
    halfway.remove(group);
    if (!halfway.isEmpty()) {
      throw new IllegalStateException("cannot add group " + group + " while the addition of " + halfway
          + " stopped halfway (known to the cluster but not open): add " + halfway
          + " again with the same members first (it needs a majority of its members up)");
    }
    int[] m = info.members().stream().mapToInt(Integer::intValue).toArray();
    java.util.TreeSet<GroupId> all = new java.util.TreeSet<>(view.groupIds());
    client.multicast(all, all.first(), new io.eyrie.multicast.internal.Wire.GroupChange(group, "partition", m, false))
        .get(remaining(deadline), java.util.concurrent.TimeUnit.NANOSECONDS);
    client.learn(info);
    all.add(group);
    awaitEveryGroup(client, all, group, 1, deadline);
    client.multicast(all, all.first(), new io.eyrie.multicast.internal.Wire.GroupChange(group, "partition", m, true))
        .get(remaining(deadline), java.util.concurrent.TimeUnit.NANOSECONDS);
    awaitEveryGroup(client, all, group, 2, deadline);
    return client.cluster();
  }

  /**
   * The groups that some open group knows but has not opened (each group is asked with a
   * linearizable query; an addition's group changes may be delivered at different times).
   */
  private static java.util.TreeSet<GroupId> halfwayGroups(MulticastClient client, java.util.Collection<GroupId> open,
      long deadline) throws Exception {
    java.util.TreeSet<GroupId> out = new java.util.TreeSet<>();
    for (GroupId g : open) {
      Object answer;
      while (true) {
        try {
          answer = client.query(g, new io.eyrie.multicast.internal.Wire.HalfwayQuery())
              .get(remaining(deadline), java.util.concurrent.TimeUnit.NANOSECONDS);
          break;
        } catch (java.util.concurrent.ExecutionException e) {
          if (remaining(deadline) <= 0) {
            throw new java.util.concurrent.TimeoutException("group " + g + " did not say which groups it knows in time: "
                + e.getCause());
          }
          java.util.concurrent.locks.LockSupport.parkNanos(100_000_000L); // poll pace (a leader being elected)
        }
      }
      if (!(answer instanceof String[] names)) {
        throw new IllegalStateException("group " + g + " answered " + answer + " when asked which groups it knows");
      }
      for (String n : names) {
        out.add(GroupId.valueOf(n));
      }
    }
    return out;
  }

  /** Polls every group until it answers at least {@code level} about {@code group} (1 known, 2 open). */
  private static void awaitEveryGroup(MulticastClient client, java.util.Set<GroupId> groups, GroupId group, int level,
      long deadline) throws Exception {
    for (GroupId g : groups) {
      while (true) {
        Object answer;
        try {
          answer = client.query(g, new io.eyrie.multicast.internal.Wire.GroupQuery(group))
              .get(remaining(deadline), java.util.concurrent.TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
          answer = null; // not there yet (a replica being created, a leader being elected)
        }
        if (answer instanceof Integer i && i >= level) {
          break;
        }
        if (remaining(deadline) <= 0) {
          throw new java.util.concurrent.TimeoutException("group " + g + " did not learn that " + group + " is "
              + (level == 1 ? "known" : "open") + " in time (last answer " + answer + ")");
        }
        java.util.concurrent.locks.LockSupport.parkNanos(100_000_000L); // poll pace
      }
    }
  }

  private static long remaining(long deadline) {
    return Math.max(0, deadline - System.nanoTime());
  }
}
