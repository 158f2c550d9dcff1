package io.eyrie.multicast.testing;

import io.eyrie.multicast.EchoDeliverers;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MulticastClient;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.multicast.NodeOptions.RaftTransport;
import io.eyrie.multicast.TlsConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;

/**
 * The cluster of the tests of Ratis's gRPC transport ({@link RaftTransport#GRPC}), plaintext
 * ({@code RaftGrpcTransportTest}) or with mutual TLS (eyrie-tools' {@code RaftGrpcTlsTest}): 3
 * nodes, partitions {@link #p0} and {@link #p1} served by {@link EchoDeliverers}, elections
 * within 500 to 1000 ms, and a {@link #client}. Closing it closes the client, then the cluster.
 */
public final class GrpcEchoCluster implements AutoCloseable {
  /** How long the tests wait for a reply, a leader or a port. */
  public static final Duration WAIT = Duration.ofSeconds(60);

  public final EmbeddedCluster cluster;
  public final MulticastClient client;
  public final GroupId p0;
  public final GroupId p1;

  private GrpcEchoCluster(Path tlsDir, TlsConfig clientTls) {
    cluster = EmbeddedCluster.newBuilder().nodes(3).partitions(2).tls(tlsDir)
        .options(NodeOptions.newBuilder().raftTransport(RaftTransport.GRPC).electionTimeoutMs(500, 1000).build())
        .deliverers(new EchoDeliverers()).start();
    client = cluster.newClient(clientTls);
    p0 = cluster.cluster().partitions().get(0);
    p1 = cluster.cluster().partitions().get(1);
  }

  /** Starts the cluster in plaintext. */
  public static GrpcEchoCluster plaintext() {
    return new GrpcEchoCluster(null, null);
  }

  /**
   * Starts the cluster with mutual TLS from the certificates in {@code dir}, the client
   * connecting as {@code clientName}.
   */
  public static GrpcEchoCluster tls(Path dir, String clientName) {
    return new GrpcEchoCluster(dir, TlsConfig.fromDir(dir, clientName));
  }

  /** The Raft port of {@code node}. */
  public int raftPort(int node) {
    return cluster.cluster().node(node).raftPort();
  }

  /** {@link TestGroups#echoed}: 5 rounds to each destination set, through {@link #client}. */
  @SafeVarargs
  public final void echoed(String tag, Set<GroupId>... dests) throws Exception {
    TestGroups.echoed(client, tag, 5, WAIT, dests);
  }

  @Override
  public void close() {
    try {
      client.close();
    } finally {
      cluster.close();
    }
  }
}
