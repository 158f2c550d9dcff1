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
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import org.apache.ratis.metrics.MetricRegistries;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one node process of a cluster for any service: starts the node, serves {@code /metrics}
 * and {@code /ready} when a port is given, publishes Ratis's metrics on JMX, and on shutdown
 * (SIGTERM, Ctrl-C) hands the leadership of the groups it leads to other nodes before closing,
 * so that a planned restart costs no election timeout. {@code bin/eyrie node}, {@code chirper
 * node} and the Jepsen harness's node are thin front ends: each names its service and reads
 * the same {@link #OPTIONS} with {@link #start(Args, NodeApp, String, NodeOptions, PrintStream)}.
 */
public final class NodeLauncher {
  private static final Logger LOG = LoggerFactory.getLogger(NodeLauncher.class);

  /**
   * The options of every node launcher's command line, each with a value: {@code --cluster FILE},
   * {@code --id N}, {@code --conf FILE} (the node's configuration file, {@link NodeConfigKeys}),
   * {@code --data DIR} ({@code --storage} is another name), {@code --metrics-port P} and {@code
   * --raft-transport netty|grpc}.
   */
  public static final Set<String> OPTIONS = Set.of("cluster", "id", "conf", "data", "metrics-port", "raft-transport");

  /**
   * The valued options of a launcher that takes more than {@link #OPTIONS}.
   *
   * @param more its own options
   * @return {@link #OPTIONS} and {@code more}
   */
  public static Set<String> options(String... more) {
    Set<String> all = new HashSet<>(OPTIONS);
    all.addAll(List.of(more));
    return all;
  }

  /**
   * The switches of every node launcher's command line: {@code --insecure} lets a node without
   * TLS start on an address that is not loopback; {@code --print-conf} prints the effective
   * configuration instead of starting ({@link #printConf}).
   */
  public static final Set<String> SWITCHES = Set.of("insecure", "print-conf");

  /** How long each leadership transfer may take at shutdown. */
  static final Duration HANDOFF_TIMEOUT = Duration.ofSeconds(3);

  private final Node node;
  private final NodeHttp http;

  private NodeLauncher(Node node, NodeHttp http) {
    this.node = node;
    this.http = http;
  }

  /**
   * Starts a node from a launcher's command line ({@link #OPTIONS}; no positional arguments):
   * the node {@code --id} of the {@code --cluster} file, with the tunables of the {@code --conf}
   * file ({@link NodeConfigKeys}; a flag wins over the file, the file over the cluster file and
   * the defaults): its storage in {@code data.dir} or {@code --data} (default {@code dataPrefix}
   * followed by the id), and {@code /metrics} on {@code metrics.port} or {@code --metrics-port}
   * (default the node line's {@code metrics=P}; none if neither). With a {@code tls DIR} line in
   * the cluster file (or {@code tls.dir}) the client port runs mutual TLS with {@code
   * DIR/node-ID.pem}; without TLS, a node whose address is not loopback starts only with {@code
   * --insecure} ({@code tls.insecure}).
   *
   * @param a the parsed command line
   * @param app the service the node hosts
   * @param dataPrefix the default storage directory, without the node's id
   * @param options the node's options, under the file's and the flags' values
   * @param out where the start-up lines go
   * @return the running launcher
   * @throws Args.UsageException if the command line names no node of the cluster file, or a
   *     key or value of the configuration is wrong
   * @throws IOException if the node or the endpoint cannot start
   */
  public static NodeLauncher start(Args a, NodeApp app, String dataPrefix, NodeOptions options, PrintStream out)
      throws Args.UsageException, IOException {
    NodeConf conf = NodeConf.resolve(a, dataPrefix);
    NodeOptions o = conf.options(options);
    try {
      return start(conf.cluster(), conf.id(), conf.dataDir(), app, o, conf.metricsPort(), out);
    } catch (IllegalArgumentException e) {
      // No TLS off loopback: one line.
      throw new Args.UsageException(e.getMessage());
    }
  }

  /**
   * Runs a node launcher's command line to its end: with {@code --print-conf} prints the
   * configuration ({@link #printConf}); otherwise starts the node ({@link #start(Args, NodeApp,
   * String, NodeOptions, PrintStream)}, with the default options) hosting the service that
   * {@code app} returns, and waits until it closes. The service is not made for {@code --print-conf}.
   *
   * @param a the parsed command line
   * @param app returns the service the node hosts
   * @param dataPrefix the default storage directory, without the node's id
   * @param out where the configuration or the start-up lines go
   * @return the exit code, 0
   * @throws Exception as {@code app}, {@link #printConf} or {@link #start(Args, NodeApp, String,
   *     NodeOptions, PrintStream)} throws
   */
  public static int run(Args a, Callable<? extends NodeApp> app, String dataPrefix, PrintStream out)
      throws Exception {
    if (!printConf(a, dataPrefix, NodeOptions.defaults(), out)) {
      start(a, app.call(), dataPrefix, NodeOptions.defaults(), out).awaitClose();
    }
    return 0;
  }

  /**
   * With {@code --print-conf}, prints the effective configuration that {@link #start(Args,
   * NodeApp, String, NodeOptions, PrintStream)} would start the node with: every key of {@link
   * NodeConfigKeys}, its value and whether it came from the default, the cluster file, the
   * {@code --conf} file or a flag. The values are checked (and the TLS files read) as for a start.
   *
   * @param a the parsed command line
   * @param dataPrefix the default storage directory, without the node's id
   * @param options the node's options
   * @param out where to print
   * @return true if {@code --print-conf} was given (and the configuration printed): the launcher
   *     then exits 0 without starting the node
   * @throws Args.UsageException for a wrong command line or configuration file, in one line
   */
  public static boolean printConf(Args a, String dataPrefix, NodeOptions options, PrintStream out)
      throws Args.UsageException {
    if (!a.flag("print-conf")) {
      return false;
    }
    NodeConf conf = NodeConf.resolve(a, dataPrefix);
    conf.options(options);
    conf.print(out);
    return true;
  }

  /**
   * Starts a node and its HTTP endpoint, and installs the shutdown hook.
   *
   * @param cluster the cluster
   * @param id this node's id
   * @param data its storage directory
   * @param app the service (an {@code io.eyrie.core.Service}): its codec registrations, partition
   *     servers and oracle
   * @param options the node's options
   * @param metricsPort the HTTP port of {@code /metrics} and {@code /ready}; 0 for none
   * @param out where the start-up lines go
   * @return the running launcher
   * @throws IOException if the node or the endpoint cannot start
   */
  public static NodeLauncher start(ClusterConfig cluster, int id, Path data, NodeApp app, NodeOptions options,
      int metricsPort, PrintStream out) throws IOException {
    MetricRegistries.global().enableJmxReporter();
    Node node = Node.start(cluster, id, data, app, options);
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
