package io.eyrie.tools;

import io.eyrie.core.Client;
import io.eyrie.core.PartitionTable;
import io.eyrie.multicast.ClusterAdmin;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MulticastClient;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * {@code eyrie partition}: the oracle's partition table of a running DS-SMR cluster. Lists it,
 * adds a partition (a new Raft group on existing nodes, {@link ClusterAdmin#addGroup}, then
 * active in the oracle's table, {@link Client#addPartition}), retires one, or drains one (retire
 * and move all its objects out, {@link Client#drain}) while the service runs.
 */
final class PartitionCommand implements Command {

  @Override
  public String name() {
    return "partition";
  }

  @Override
  public String summary() {
    return "lists, adds, retires or drains partitions of a running cluster";
  }

  @Override
  public String usage() {
    return """
        usage: eyrie partition list   --cluster FILE
               eyrie partition add    --cluster FILE --group NAME [--members 1,2,3] [--timeout 60s]
               eyrie partition retire --cluster FILE --group NAME
               eyrie partition drain  --cluster FILE --group NAME [--batch 64] [--timeout 10m]

          list      each partition's state in the oracle's table (ACTIVE, RETIRED, DRAINED)
                    and how many objects it holds
          add       creates the partition group on the given nodes if the cluster does not
                    have it yet (default: the nodes of the cluster file's first partition),
                    then makes it active: new objects go there, and the learned placement's
                    rebalancer spreads objects into it. Also re-activates a retired partition.
          retire    nothing new goes to the partition; rebalancers move its objects out
          drain     retires the partition and moves all its objects to the active ones, in
                    batches of --batch through linearizable moves, until it holds none (its
                    group keeps running, empty)

          --cluster FILE   the cluster file (added groups are learned from the nodes)
          --group NAME     the partition
          --members LIST   comma-separated node ids for a new group
          --batch N        objects per move round when draining (default 64)
          --timeout D      how long to wait (default 60s; drain 10m)
        """ + Tools.AS_USAGE + """

        Exit code 0 on success, 1 if the cluster refused or the timeout passed.""";
  }

  @Override
  public Set<String> valued() {
    return Set.of("cluster", "group", "members", "batch", "timeout", Tools.AS);
  }

  @Override
  public int run(Args a, PrintStream out, PrintStream err) throws Exception {
    if (a.positional().size() != 1) {
      throw new Args.UsageException("give one of list, add, retire, drain");
    }
    String verb = a.positional().get(0);
    if (!List.of("list", "add", "retire", "drain").contains(verb)) {
      throw new Args.UsageException("unknown partition command '" + verb + "' (list, add, retire, drain)");
    }
    ClusterConfig file = Tools.cluster(a);
    if (file.oracle() == null) {
      throw new Args.UsageException("the cluster file has no oracle group");
    }
    GroupId group = verb.equals("list") ? null : GroupId.valueOf(a.required("group"));
    if (group != null && group.equals(file.oracle())) {
      throw new Args.UsageException(group + " is the oracle, not a partition");
    }
    int batch = a.integer("batch", 64, 1, 100_000);
    Duration timeout = a.duration("timeout", verb.equals("drain") ? Duration.ofMinutes(10) : Duration.ofSeconds(60),
        Duration.ofMillis(100));
    List<Integer> members = members(a, file);
    long ms = timeout.toMillis();
    io.eyrie.multicast.TlsConfig tls = Tools.tls(a, file);
    ClusterConfig view = Tools.view(file, tls, Math.min(ms, 10_000));
    try (Client client = Client.newBuilder().cluster(view).tls(tls).totalTimeoutMs(ms).build()) {
      PartitionTable t;
      switch (verb) {
        case "list" -> t = client.partitionTable().get(ms, TimeUnit.MILLISECONDS);
        case "add" -> {
          if (!view.groups().containsKey(group)) {
            try (MulticastClient mc = MulticastClient.newBuilder().cluster(view).tls(tls).totalTimeoutMs(ms).build()) {
              out.println("adding group " + group + " on nodes " + members);
              ClusterAdmin.addGroup(mc, group, members, timeout);
            }
          }
          t = client.addPartition(group).get(ms, TimeUnit.MILLISECONDS);
        }
        case "retire" -> t = client.retirePartition(group).get(ms, TimeUnit.MILLISECONDS);
        default -> {
          out.println("draining " + group + " ...");
          t = client.drain(group, batch, timeout).get(ms + 5000, TimeUnit.MILLISECONDS);
        }
      }
      out.print(t);
      return 0;
    } catch (java.util.concurrent.ExecutionException e) {
      err.println("eyrie partition " + verb + ": " + (e.getCause() == null ? e : e.getCause().getMessage()));
      return 1;
    }
  }

  private static List<Integer> members(Args a, ClusterConfig file) throws Args.UsageException {
    if (!a.has("members")) {
      return file.group(file.partitions().get(0)).members();
    }
    List<Integer> out = new ArrayList<>();
    for (String s : a.string("members", "").split(",")) {
      try {
        int n = Integer.parseInt(s.trim());
        if (!file.nodes().containsKey(n)) {
          throw new Args.UsageException("--members names node " + n + ", which the cluster file does not have");
        }
        out.add(n);
      } catch (NumberFormatException e) {
        throw new Args.UsageException("--members takes comma-separated node ids, got '" + s + "'");
      }
    }
    if (out.isEmpty()) {
      throw new Args.UsageException("--members names no node");
    }
    return out;
  }
}
