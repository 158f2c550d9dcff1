package io.eyrie.multicast;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * Runs one node of a multi-process cluster:
 *
 * <pre>
 * java io.eyrie.multicast.NodeMain --cluster cluster.conf --id 1 [--storage data/n1] [--app FACTORY]
 * </pre>
 *
 * {@code FACTORY} names a {@link DelivererFactory} class with a public no-argument constructor
 * (default {@link EchoDeliverers}, which answers every message with its payload). The process
 * runs until it is killed; it recovers its groups from {@code --storage} when started again.
 */
public final class NodeMain {
  private NodeMain() {}

  /**
   * Entry point.
   *
   * @param args the command line
   * @throws Exception if the node cannot start
   */
  public static void main(String[] args) throws Exception {
    Map<String, String> opts = parse(args);
    if (!opts.containsKey("cluster") || !opts.containsKey("id")) {
      System.err.println("usage: NodeMain --cluster FILE --id N [--storage DIR] [--app DELIVERER_FACTORY_CLASS]");
      System.exit(2);
    }
    ClusterConfig cluster = ClusterConfig.load(Path.of(opts.get("cluster")));
    int id = Integer.parseInt(opts.get("id"));
    Path storage = Path.of(opts.getOrDefault("storage", "data/node-" + id));
    DelivererFactory apps = (DelivererFactory) Class.forName(opts.getOrDefault("app", EchoDeliverers.class.getName()))
        .getDeclaredConstructor().newInstance();
    Node node = Node.start(cluster, id, storage, apps, NodeOptions.defaults());
    Runtime.getRuntime().addShutdownHook(new Thread(node::close, "eyrie-shutdown"));
    node.awaitClose();
  }

  static Map<String, String> parse(String[] args) {
    Map<String, String> m = new HashMap<>();
    for (int i = 0; i < args.length; i++) {
      if (!args[i].startsWith("--") || i + 1 >= args.length) {
        throw new IllegalArgumentException("expected --name value, got " + args[i]);
      }
      m.put(args[i].substring(2), args[++i]);
    }
    return m;
  }
}
