package io.eyrie.multicast;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Runs one node of a multi-process cluster:
 *
 * <pre>
 * java io.eyrie.multicast.NodeMain --cluster cluster.conf --id 1 [--data data/n1] [--app FACTORY]
 * </pre>
 *
 * {@code FACTORY} names a {@link DelivererFactory} class with a public no-argument constructor
 * (default {@link EchoDeliverers}, which answers every message with its payload). The process
 * runs until it is killed; it recovers its groups from {@code --data} (also {@code --storage})
 * when started again. {@code --help} prints the usage; a wrong option exits with 2 before
 * anything starts.
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
    io.eyrie.multicast.internal.transport.RatisSupport.configureJvm(); // not Node.prepareJvm(): loading Node starts logging, and --help must print only its usage
    Map<String, String> opts;
    try {
      opts = parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("NodeMain: " + e.getMessage() + " (NodeMain --help shows the usage)");
      System.exit(2);
      return;
    }
    if (opts.containsKey("help")) {
      System.out.println(USAGE);
      System.exit(0);
    }
    ClusterConfig cluster = ClusterConfig.load(Path.of(opts.get("cluster")));
    int id = Integer.parseInt(opts.get("id"));
    Path storage = Path.of(opts.getOrDefault("data", "data/node-" + id));
    DelivererFactory apps = (DelivererFactory) Class.forName(opts.getOrDefault("app", EchoDeliverers.class.getName()))
        .getDeclaredConstructor().newInstance();
    Node node = Node.start(cluster, id, storage, apps, NodeOptions.defaults());
    Runtime.getRuntime().addShutdownHook(new Thread(node::close, "eyrie-shutdown"));
    node.awaitClose();
  }

  static final String USAGE = """
      usage: NodeMain --cluster FILE --id N [--data DIR] [--app DELIVERER_FACTORY_CLASS]

        --cluster FILE   the cluster file
        --id N           this node's id in the file
        --data DIR       its logs and snapshots (default data/node-N; --storage is another name)
        --app CLASS      a DelivererFactory with a public no-argument constructor (default echo)""";

  private static final Set<String> OPTIONS = Set.of("cluster", "id", "data", "app");

  /** Parses {@code --name value} options; {@code {help=...}} alone for --help; fails on anything else. */
  static Map<String, String> parse(String[] args) {
    Map<String, String> m = new HashMap<>();
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--help") || args[i].equals("-h")) {
        return Map.of("help", "true");
      }
      if (!args[i].startsWith("--")) {
        throw new IllegalArgumentException("unexpected argument '" + args[i] + "'");
      }
      String name = args[i].substring(2);
      name = name.equals("storage") ? "data" : name;
      if (!OPTIONS.contains(name)) {
        throw new IllegalArgumentException("unknown option " + args[i]);
      }
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException("option " + args[i] + " needs a value");
      }
      m.put(name, args[++i]);
    }
    for (String required : List.of("cluster", "id")) {
      if (!m.containsKey(required) && !m.containsKey("help")) {
        throw new IllegalArgumentException("option --" + required + " is required");
      }
    }
    return m;
  }
}
