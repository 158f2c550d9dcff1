package io.eyrie.chirper;

import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.MulticastClient;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Locale;

/**
 * {@code chirper load --resend-log FILE}: one line per resent call, "time message-id node attempts
 * reason", written as the clients resend (buffered, flushed on close). What a slow command waited
 * for shows as its resends: an attempt timeout means a node held the call for the whole attempt.
 */
final class ResendLog implements MulticastClient.ResendListener, AutoCloseable {
  private final BufferedWriter out;
  private IOException failed;

  ResendLog(Path file) throws IOException {
    this.out = Files.newBufferedWriter(file);
  }

  @Override
  public synchronized void attemptFailed(MsgId msgId, int node, int attempts, Reason reason) {
    if (failed != null) {
      return;
    }
    try {
      out.write(String.format(Locale.ROOT, "%s %s %d %d %s%n", Instant.now(), msgId == null ? "query" : msgId,
          node, attempts, reason.name().toLowerCase(Locale.ROOT)));
    } catch (IOException e) {
      failed = e; // the clients' I/O threads must not see it: close() reports it
    }
  }

  @Override
  public synchronized void close() throws IOException {
    out.close();
    if (failed != null) {
      throw new IOException("the resend log was cut short", failed);
    }
  }
}
