package io.eyrie.tools;

import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.GroupStatus;
import io.eyrie.multicast.Node;
import io.eyrie.multicast.NodeApp;
import io.eyrie.multicast.NodeOptions;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.ratis.metrics.MetricRegistries;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one node process of a cluster for any service: starts the node, serves {@code /metrics}
 * and {@code /ready} when a port is given, publishes Ratis's metrics on JMX, and on shutdown
 * (SIGTERM, Ctrl-C) hands the leadership of the groups it leads to other nodes before closing,
 * so that a planned restart costs no election timeout. {@code bin/eyrie node} and
 * {@code chirper node} are thin front ends.
 */
public final class NodeLauncher {
  private static final Logger LOG = LoggerFactory.getLogger(NodeLauncher.class);

  /** How long each leadership transfer may take at shutdown. */
  static final Duration HANDOFF_TIMEOUT = Duration.ofSeconds(3);

  private final Node node;
  private final NodeHttp http;

  private NodeLauncher(Node node, NodeHttp http) {
    this.node = node;
    this.http = http;
  }

  /**
   * Starts a node and its HTTP endpoint, and installs the shutdown hook.
   *
   * @param cluster the cluster
   * @param id this node's id
   * @param data its storage directory
   * @param app the service (an {@code io.eyrie.core.Service}): its codec registrations, partition
   *     servers and oracle
   * @param metricsPort the HTTP port of {@code /metrics} and {@code /ready}; 0 for none
   * @param out where the start-up lines go
   * @return the running launcher
   * @throws IOException if the node or the endpoint cannot start
   */
  public static NodeLauncher start(ClusterConfig cluster, int id, Path data, NodeApp app, int metricsPort,
      PrintStream out) throws IOException {
    MetricRegistries.global().enableJmxReporter();
    Node node = Node.start(cluster, id, data, app, NodeOptions.defaults());
    NodeHttp http;
    try {
      http = metricsPort > 0 ? NodeHttp.start(node, cluster.node(id).host(), metricsPort) : null;
    } catch (IOException | RuntimeException e) {
      node.close();
      throw e;
    }
    NodeLauncher l = new NodeLauncher(node, http);
    Runtime.getRuntime().addShutdownHook(new Thread(l::stop, "eyrie-node-shutdown"));
    ClusterConfig.NodeInfo self = cluster.node(id);
    out.printf("eyrie node %d up: raft %s:%d, clients %s:%d, metrics %s, data %s%n", id, self.host(), self.raftPort(),
        self.host(), self.clientPort(), http == null ? "off" : "http://" + self.host() + ":" + http.port() + "/metrics",
        data);
    for (GroupId g : node.groups()) {
      // ratis-shell and Ratis's own logs name groups by these ids
      out.printf("  group %s = ratis group %s%n", g, GroupStatus.raftGroupIdOf(g));
    }
    out.flush();
    return l;
  }

  /** Returns the node. */
  public Node node() {
    return node;
  }

  /** Blocks until the node is closed (by the shutdown hook or {@link #stop()}). */
  public void awaitClose() throws InterruptedException {
    node.awaitClose();
  }

  /** Hands off leadership, then closes the endpoint and the node. Safe to call twice. */
  public synchronized void stop() {
    if (http != null) {
      http.close();
    }
    List<GroupId> moved = node.handOffLeadership(HANDOFF_TIMEOUT);
    LOG.info("node {} stopping: no longer leads {}", node.id(), moved);
    node.close();
  }
}
