package io.eyrie.tools;

import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.TlsConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** What the commands share. */
final class Tools {
  private Tools() {}

  /** Reads {@code --cluster FILE}; a missing or malformed file is a usage error. */
  static ClusterConfig cluster(Args a) throws Args.UsageException {
    Path file = Path.of(a.required("cluster"));
    if (!Files.isRegularFile(file)) {
      throw new Args.UsageException("no cluster file " + file);
    }
    try {
      return ClusterConfig.load(file);
    } catch (IOException | IllegalArgumentException e) {
      throw new Args.UsageException("cannot read " + file + ": " + e.getMessage());
    }
  }

  /** The option naming the identity a tool connects as when the cluster runs TLS. */
  static final String AS = "as";

  /** The usage lines of {@code --as}. */
  static final String AS_USAGE =
      "  --as NAME        with a 'tls DIR' line in the cluster file, connect as the identity\n"
      + "                   whose files are DIR/NAME.pem and DIR/NAME-key.pem (default: the one\n"
      + "                   admin-*.pem in DIR)\n";

  /**
   * Returns the TLS configuration a tool connects with: null if the cluster file has no {@code
   * tls} line, else the identity {@code --as NAME} names, by default the only admin certificate
   * in the directory.
   */
  static TlsConfig tls(Args a, ClusterConfig cluster) throws Args.UsageException {
    Path dir = cluster.tlsDir();
    if (dir == null) {
      if (a.has(AS)) {
        throw new Args.UsageException("--as needs a 'tls DIR' line in the cluster file");
      }
      return null;
    }
    String name = a.string(AS, null);
    if (name == null) {
      List<String> admins = new ArrayList<>();
      try (Stream<Path> files = Files.list(dir)) {
        files.map(p -> p.getFileName().toString()).filter(f -> f.startsWith("admin-") && f.endsWith(".pem")
            && !f.endsWith("-key.pem")).sorted().forEach(f -> admins.add(f.substring(0, f.length() - 4)));
      } catch (IOException e) {
        throw new Args.UsageException("cannot list the certificates in " + dir + ": " + e);
      }
      if (admins.size() != 1) {
        throw new Args.UsageException("give --as NAME, the identity to connect as (" + (admins.isEmpty()
            ? "no admin-*.pem in " + dir : "admin certificates in " + dir + ": " + admins) + ")");
      }
      name = admins.get(0);
    }
    try {
      return cluster.tls(name);
    } catch (IllegalArgumentException e) {
      throw new Args.UsageException(e.getMessage());
    }
  }

  /**
   * Returns the cluster as its nodes know it: the file's groups and the partitions added to the
   * running cluster since (asked of any node); the file's alone if no node answers in time.
   */
  static ClusterConfig view(ClusterConfig file, long timeoutMs) {
    return view(file, null, timeoutMs);
  }

  /** As {@link #view(ClusterConfig, long)}, connecting with {@code tls} (null for plaintext). */
  static ClusterConfig view(ClusterConfig file, TlsConfig tls, long timeoutMs) {
    try (io.eyrie.multicast.MulticastClient mc = io.eyrie.multicast.MulticastClient.newBuilder().cluster(file)
        .tls(tls).totalTimeoutMs(timeoutMs).build()) {
      return mc.refreshView().get(timeoutMs + 1000, java.util.concurrent.TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      return file;
    }
  }
}
