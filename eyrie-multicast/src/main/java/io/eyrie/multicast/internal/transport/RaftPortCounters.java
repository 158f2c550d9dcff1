package io.eyrie.multicast.internal.transport;

import java.util.concurrent.atomic.LongAdder;
import org.apache.ratis.conf.Parameters;

/**
 * What a node's Raft port refused since the node started: connections closed by the frame limit
 * ({@link RaftFrameLimit}) and TLS handshakes refused ({@link RaftTls}: no certificate, another
 * CA, expired, plaintext, or a certificate whose role is not {@code node}). One per node, carried
 * to Ratis's RPC in the node's parameters and read by {@code Node.raftPortStats()}.
 */
public final class RaftPortCounters {
  static final String KEY = "eyrie.raft.port-counters";

  final LongAdder frameRefusals = new LongAdder();
  final LongAdder tlsRefusals = new LongAdder();

  /** Connections closed for a frame over the limit or a malformed length prefix. */
  public long frameRefusals() {
    return frameRefusals.sum();
  }

  /** TLS handshakes the Raft port refused or that timed out. */
  public long tlsRefusals() {
    return tlsRefusals.sum();
  }

  /** Puts these counters in a node's Ratis parameters. */
  void into(Parameters p) {
    p.put(KEY, this, RaftPortCounters.class);
  }

  /** The node's counters in the parameters, or fresh ones nobody reads (a Ratis client's own). */
  static RaftPortCounters of(Parameters p) {
    RaftPortCounters c = p == null ? null : p.get(KEY, RaftPortCounters.class);
    return c == null ? new RaftPortCounters() : c;
  }
}
