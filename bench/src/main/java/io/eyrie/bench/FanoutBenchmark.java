package io.eyrie.bench;

import io.eyrie.multicast.EchoDeliverers;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MulticastClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Question: how much latency does each extra destination group add to one multicast (the
 * price of a multi-partition command's ordering, before any object moves)? One client, one
 * outstanding multicast, embedded cluster of 3 nodes and 4 partitions with echo deliverers.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class FanoutBenchmark {
  /** Destination groups per multicast. */
  @Param({"1", "2", "4"})
  public int groups;

  private EmbeddedCluster cluster;
  private MulticastClient client;
  private Set<GroupId> dests;
  private final byte[] payload = new byte[64];

  /** Starts the cluster and connects one client. */
  @Setup(Level.Trial)
  public void setup() {
    cluster = EmbeddedCluster.newBuilder().nodes(3).partitions(4).deliverers(new EchoDeliverers()).start();
    cluster.awaitLeaders(Duration.ofSeconds(60));
    client = cluster.newClient();
    List<GroupId> all = new ArrayList<>(cluster.cluster().partitions());
    dests = new TreeSet<>(all.subList(0, groups));
    client.multicast(dests, payload).join();
  }

  /** Closes the client and the cluster. */
  @TearDown(Level.Trial)
  public void tearDown() {
    client.close();
    cluster.close();
  }

  /** One multicast, waiting for its reply. */
  @Benchmark
  public Object multicast() {
    return client.multicast(dests, payload).join();
  }
}
