package io.eyrie.tools;

import io.eyrie.core.Service;
import java.io.PrintStream;
import java.util.Set;
import java.util.function.Supplier;

/**
 * {@code eyrie node}: one node process hosting any service. The service is a class with a
 * public no-argument constructor implementing {@code Supplier<io.eyrie.core.Service>}.
 */
final class NodeCommand implements Command {

  @Override
  public String name() {
    return "node";
  }

  @Override
  public String summary() {
    return "one node process hosting a service (runs until stopped; hands off leadership on stop)";
  }

  @Override
  public String usage() {
    return """
        usage: eyrie node --cluster FILE --id N --service CLASS [--conf FILE] [--data DIR] [--metrics-port P]
                          [--raft-transport netty|grpc] [--insecure] [--print-conf]

          --cluster FILE     the cluster file
          --id N             this node's id in the file
          --service CLASS    the service: a class with a public no-argument constructor that
                             implements java.util.function.Supplier<io.eyrie.core.Service>, e.g.
                             io.eyrie.examples.kv.KvService (on the class path:
                             EYRIE_CLASSPATH=my-service.jar bin/eyrie node ...)
          --data DIR         where the node keeps its Raft logs and snapshots (default
                             data/node-N; kept across restarts; --storage is another name)
          --metrics-port P   serve /metrics and /ready on this port (default: the node line's
                             metrics=P in the cluster file; none if neither)
          --raft-transport T the Raft port's transport: netty (the default, Eyrie's Netty RPC) or
                             grpc (Ratis's gRPC, to compare); every node of a cluster the same
          --insecure         start without TLS although the node's address is not loopback
                             (anyone who reaches its client port may send anything)
          --conf FILE        the node's tunables (election timeout, snapshot threshold, client
                             limits, TLS files, ...), Java properties; conf/node.properties lists
                             every key with its default. A flag wins over the file, the file
                             over the cluster file's metrics=P and tls lines and the defaults
          --print-conf       print every key's effective value and where it came from (default,
                             cluster file, conf file, flag), then exit 0 without starting
                             (--service is not needed)

        With a line 'tls DIR' in the cluster file the client port runs mutual TLS with the
        certificates of eyrie certs --out DIR (this node's: DIR/node-N.pem and its key).

        The node runs until it is stopped. On SIGTERM or Ctrl-C it first hands the leadership of
        the groups it leads to other nodes; kill -9 is safe too (it recovers from DIR).""";
  }

  @Override
  public Set<String> valued() {
    return NodeLauncher.options("service");
  }

  @Override
  public Set<String> switches() {
    return NodeLauncher.SWITCHES;
  }

  @Override
  public int run(Args a, PrintStream out, PrintStream err) throws Exception {
    return NodeLauncher.run(a, () -> load(a.required("service")), "data/node-", out);
  }

  /**
   * Instantiates the service class (public, a public no-argument constructor, implementing
   * {@code Supplier<io.eyrie.core.Service>}) and returns its descriptor.
   */
  static Service load(String className) throws Args.UsageException {
    Class<?> c;
    try {
      c = Class.forName(className, true, Thread.currentThread().getContextClassLoader());
    } catch (ClassNotFoundException e) {
      throw new Args.UsageException("no class " + className + " on the class path (EYRIE_CLASSPATH)");
    }
    if (!Supplier.class.isAssignableFrom(c)) {
      throw new Args.UsageException(className + " does not implement java.util.function.Supplier<io.eyrie.core.Service>");
    }
    Object supplied;
    try {
      supplied = ((Supplier<?>) c.getConstructor().newInstance()).get();
    } catch (NoSuchMethodException e) {
      throw new Args.UsageException(className + " has no public no-argument constructor");
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw new Args.UsageException("cannot create the service " + className + ": " + CommandLine.unwrap(e));
    }
    if (!(supplied instanceof Service s)) {
      throw new Args.UsageException(className + " supplies "
          + (supplied == null ? "null" : supplied.getClass().getName()) + ", not an io.eyrie.core.Service");
    }
    return s;
  }
}
