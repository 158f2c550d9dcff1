package io.eyrie.bench;

import io.eyrie.multicast.EchoDeliverers;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MulticastClient;
import io.eyrie.multicast.Node;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.multicast.NodeStats;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * What connections that send nothing, or half a frame, cost a node (issue 28, "a node's memory
 * with 1,000 idle connections, before and after the caps"): one node with one group, in this JVM;
 * {@code N} connections that only connect and {@code N} that send the 4-byte header of a 1 MiB
 * frame and 64 KiB of it, then nothing. Measured once they are all open and again after the
 * frame idle timeout: the heap after a full collection, the direct buffers (the JDK's pool, where
 * Netty's pooled buffers live), the process's resident set, and the connections the node holds,
 * with a multicast before and after to show the node still serves. Two settings: the node's
 * defaults ("caps": connection caps, a 10 s frame idle timeout) and "no caps" (caps and timeout
 * set to their maximum, as the node was before issue 28).
 */
final class IdleConnectionsBenchmark {
  private static final int DECLARED = 1 << 20;
  private static final int SENT = 64 << 10;

  private IdleConnectionsBenchmark() {}

  /** One measurement. */
  private record Sample(String setting, String when, double heapMb, double directMb, double rssMb, long connections,
      long frameTimeouts, boolean serves) {}

  public static void main(String[] args) throws Exception {
    BenchArgs o = BenchArgs.parse(args);
    int n = o.integer("connections", 1000);
    Path out = o.path("out", "bench/results");
    List<Sample> samples = new ArrayList<>();
    NodeOptions caps = NodeOptions.newBuilder().build();
    NodeOptions none = NodeOptions.newBuilder().maxClientConnections(Integer.MAX_VALUE)
        .maxClientConnectionsPerAddress(Integer.MAX_VALUE).frameIdleTimeoutMs(Integer.MAX_VALUE).build();
    // The unbounded setting first and last, the defaults in between: no setting gets all the warm JVM.
    samples.addAll(run("no caps", none, n));
    samples.addAll(run("caps", caps, n));
    samples.addAll(run("no caps (again)", none, n));
    String md = report(samples, n, caps);
    Files.createDirectories(out);
    Files.writeString(out.resolve("idle-connections.md"), md);
    System.out.print(md);
    System.exit(0);
  }

  private static List<Sample> run(String setting, NodeOptions options, int n) throws Exception {
    List<Sample> s = new ArrayList<>();
    try (EmbeddedCluster c = EmbeddedCluster.newBuilder().nodes(1).partitions(1).oracle(false).options(options)
        .deliverers(new EchoDeliverers()).start();
         MulticastClient client = c.newClient()) {
      GroupId g = c.cluster().groupIds().iterator().next();
      Node node = c.node(1);
      int port = c.cluster().node(1).clientPort();
      s.add(sample(setting, "no connections", node, client, g));
      List<Socket> held = new ArrayList<>();
      try {
        byte[] part = ByteBuffer.allocate(4 + SENT).putInt(DECLARED).array();
        for (int i = 0; i < n; i++) {
          held.add(open(port));
          Socket half = open(port);
          held.add(half);
          write(half, part);
        }
        // Let the node read what was sent (polling the gauge, bounded).
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (node.endpointStats().connections() < Math.min(2L * n, options.maxClientConnectionsPerAddress())
            && System.nanoTime() < deadline) {
          LockSupport.parkNanos(100_000_000L);
        }
        LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(2));
        s.add(sample(setting, n + " idle + " + n + " half frames open", node, client, g));
        long idleMs = Math.min(options.frameIdleTimeoutMs(), 10_000);
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(idleMs + 3_000));
        s.add(sample(setting, "after " + (idleMs + 3_000) / 1000 + " s more", node, client, g));
      } finally {
        for (Socket k : held) {
          try {
            k.close();
          } catch (IOException e) {
            // closing anyway
          }
        }
      }
    }
    return s;
  }

  private static Socket open(int port) throws IOException {
    Socket k = new Socket();
    k.connect(new InetSocketAddress("127.0.0.1", port), 5000);
    return k;
  }

  private static void write(Socket k, byte[] bytes) {
    try {
      OutputStream os = k.getOutputStream();
      os.write(bytes);
      os.flush();
    } catch (IOException e) {
      // a node that closed it already: counted by its gauge
    }
  }

  private static Sample sample(String setting, String when, Node node, MulticastClient client, GroupId g) {
    boolean serves;
    try {
      client.multicast(Set.of(g), new byte[8]).get(20, TimeUnit.SECONDS);
      serves = true;
    } catch (Exception e) {
      serves = false;
    }
    System.gc();
    LockSupport.parkNanos(200_000_000L);
    double heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() / 1048576.0;
    double direct = 0;
    for (BufferPoolMXBean p : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
      if ("direct".equals(p.getName())) {
        direct = p.getMemoryUsed() / 1048576.0;
      }
    }
    NodeStats.Endpoint st = node.endpointStats();
    Sample x = new Sample(setting, when, heap, direct, rssMb(), st.connections(), st.frameTimeouts(), serves);
    System.out.println(x);
    return x;
  }

  /** The process's resident set (Linux), or NaN. */
  private static double rssMb() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
        }
      }
    } catch (IOException | NumberFormatException e) {
      // not Linux
    }
    return Double.NaN;
  }

  private static String report(List<Sample> samples, int n, NodeOptions caps) {
    StringBuilder b = new StringBuilder("""
        # Idle and half-sent connections against one node

        `bin/bench idle-connections --connections %1$d`: %1$d connections that send nothing and %1$d
        that send the header of a %2$d KiB frame and %3$d KiB of it. "caps" is the node's defaults (at
        most %4$d connections, %5$d per address, a started frame closed after %6$d ms idle); "no caps"
        sets them to their maximum. Heap after a full collection; direct = the JDK's direct buffer pool
        (Netty's pooled buffers); RSS = the whole JVM (one node, its Ratis group, the client).

        """.formatted(n, DECLARED >> 10, SENT >> 10, caps.maxClientConnections(),
        caps.maxClientConnectionsPerAddress(), caps.frameIdleTimeoutMs()));
    b.append("| setting | when | heap MiB | direct MiB | RSS MiB | connections held | closed for an idle frame | serves |\n");
    b.append("|---|---|---|---|---|---|---|---|\n");
    for (Sample s : samples) {
      b.append(String.format(Locale.ROOT, "| %s | %s | %.1f | %.1f | %.0f | %d | %d | %s |%n", s.setting(), s.when(),
          s.heapMb(), s.directMb(), s.rssMb(), s.connections(), s.frameTimeouts(), s.serves() ? "yes" : "no"));
    }
    return b.toString();
  }
}
