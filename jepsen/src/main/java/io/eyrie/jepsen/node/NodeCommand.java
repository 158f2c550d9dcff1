package io.eyrie.jepsen.node;

import io.eyrie.core.Service;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.tools.Args;
import io.eyrie.tools.CommandLine;
import io.eyrie.tools.NodeLauncher;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The Jepsen harness's node process ({@link JepsenNode#main}): the launcher of {@code eyrie node}
 * hosting a jepsen service chosen by name, with two options of the harness's own: the positive
 * control's unsafe reads and a low snapshot threshold.
 */
final class NodeCommand implements io.eyrie.tools.Command {
  /** The port of the unsafe reads when {@code --unsafe-reads} names none. */
  static final String UNSAFE_READS_PORT = "7300";

  /**
   * Runs a node's command line until the node stops.
   *
   * @param args the command line ({@code --unsafe-reads} may come without its port)
   * @param out where the start-up lines go
   * @param err where problems go
   * @return the exit code
   */
  static int run(String[] args, PrintStream out, PrintStream err) {
    List<String> line = new ArrayList<>(List.of(args));
    int u = line.indexOf("--unsafe-reads");
    if (u >= 0 && (u + 1 == line.size() || line.get(u + 1).startsWith("-"))) {
      line.add(u + 1, UNSAFE_READS_PORT);
    }
    return CommandLine.run("JepsenNode", new NodeCommand(), line, out, err);
  }

  @Override
  public String name() {
    return "node";
  }

  @Override
  public String summary() {
    return "one node process hosting a jepsen service";
  }

  @Override
  public String usage() {
    return """
        usage: JepsenNode --cluster FILE --id N --service register|kv|bank --data DIR
                          [--unsafe-reads [PORT]] [--snapshot-threshold ENTRIES] [--metrics-port P]
                          [--conf FILE] [--insecure] [--print-conf]

          --cluster FILE               the cluster file
          --id N                       this node's id in the file
          --service NAME               register (default), kv or bank
          --data DIR                   the node's Raft logs and snapshots (default data/node-N;
                                       --storage is another name)
          --unsafe-reads [PORT]        serve the last applied value of each register over HTTP
                                       on PORT (default 7300), outside the ordered path: the
                                       positive control (register only)
          --snapshot-threshold ENTRIES snapshot every ENTRIES log entries
          --metrics-port P             serve /metrics and /ready on this port
          --insecure                   start without TLS on an address that is not loopback
                                       (the harness's private network namespaces)
          --conf FILE                  the node's tunables, as for eyrie node
          --print-conf                 print the effective configuration and exit

        The node runs until it is killed, like eyrie node.""";
  }

  @Override
  public Set<String> valued() {
    return NodeLauncher.options("service", "unsafe-reads", "snapshot-threshold");
  }

  @Override
  public Set<String> switches() {
    return NodeLauncher.SWITCHES;
  }

  @Override
  public int run(Args a, PrintStream out, PrintStream err) throws Exception {
    String name = a.choice("service", "register", "register", "kv", "bank");
    JepsenNode.UnsafeReads unsafe = null;
    int unsafePort = a.integer("unsafe-reads", 0, 1, 65535);
    if (a.has("unsafe-reads")) {
      if (!name.equals("register")) {
        throw new Args.UsageException("--unsafe-reads needs --service register");
      }
      unsafe = new JepsenNode.UnsafeReads();
    }
    JepsenNode.UnsafeReads view = unsafe;
    Service service = view == null ? JepsenNode.service(name)
        : JepsenNode.service(() -> new JepsenNode.RegisterServer(view));
    // --snapshot-threshold (low, so that some restarts load a snapshot and others, before the
    // first one, replay the log) is the flag of the key raft.snapshot.threshold: the launcher applies it.
    if (NodeLauncher.printConf(a, "data/node-", NodeOptions.defaults(), out)) {
      return 0;
    }
    NodeLauncher node = NodeLauncher.start(a, service, "data/node-", NodeOptions.defaults(), out);
    if (unsafe != null) {
      String host = node.node().cluster().node(node.node().id()).host();
      unsafe.serve(host, unsafePort);
      out.println("unsafe reads served on " + host + ":" + unsafePort);
    }
    out.println("jepsen node " + node.node().id() + " up, service " + name);
    out.flush();
    node.awaitClose();
    return 0;
  }
}
