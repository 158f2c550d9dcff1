package io.eyrie.multicast;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * What {@link EmbeddedCluster} does outside its nodes: starting and stopping them from a daemon
 * thread of their own (so that every thread Ratis and Netty create for a node is a daemon), and
 * deleting a temporary storage directory.
 */
final class EmbeddedThreads {
  private EmbeddedThreads() {}

  /**
   * Runs a task on a new daemon thread and waits for it; rethrows what it threw (an
   * {@link IOException} as an {@link UncheckedIOException}).
   */
  static <T> T onDaemonThread(String name, java.util.concurrent.Callable<T> task) {
    Object[] out = new Object[1];
    Thread t = new Thread(() -> {
      try {
        out[0] = task.call();
      } catch (Exception | Error e) {
        out[0] = e;
      }
    }, name);
    t.setDaemon(true);
    t.start();
    try {
      t.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted: " + name, e);
    }
    if (out[0] instanceof IOException e) {
      throw new UncheckedIOException(name, e);
    } else if (out[0] instanceof RuntimeException e) {
      throw e;
    } else if (out[0] instanceof Error e) {
      throw e;
    } else if (out[0] instanceof Exception e) {
      throw new IllegalStateException(name, e);
    }
    @SuppressWarnings("unchecked")
    T result = (T) out[0];
    return result;
  }

  /** Deletes a directory and everything below it, best effort. */
  static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> s = Files.walk(dir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // best effort: a temp directory left behind is harmless
    }
  }
}
