package io.eyrie.tools;

import io.eyrie.multicast.ClusterConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

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

  /**
   * Returns the cluster as its nodes know it: the file's groups and the partitions added to the
   * running cluster since (asked of any node); the file's alone if no node answers in time.
   */
  static ClusterConfig view(ClusterConfig file, long timeoutMs) {
    try (io.eyrie.multicast.MulticastClient mc = io.eyrie.multicast.MulticastClient.newBuilder().cluster(file)
        .totalTimeoutMs(timeoutMs).build()) {
      return mc.refreshView().get(timeoutMs + 1000, java.util.concurrent.TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      return file;
    }
  }
}
