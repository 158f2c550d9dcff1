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
}
