package io.eyrie.multicast;

import io.eyrie.multicast.NodeOptions.RaftTransport;
import java.util.function.Function;

/**
 * The values of a node's {@link NodeOptions}, with their defaults, and the checks the builder
 * applies to them. Mutable: a {@link NodeOptions.Builder} sets its own, and the options it builds
 * (and each builder made from them) take a {@link #copy()}, which nothing changes after.
 */
final class NodeSettings implements Cloneable {
  long snapshotThreshold = NodeOptions.SNAPSHOT_THRESHOLD_DEFAULT;
  long segmentSizeMax = NodeOptions.SEGMENT_SIZE_MAX_DEFAULT;
  boolean snapshotOnStop = true;
  int electionTimeoutMinMs = NodeOptions.ELECTION_TIMEOUT_MIN_MS_DEFAULT;
  int electionTimeoutMaxMs = NodeOptions.ELECTION_TIMEOUT_MAX_MS_DEFAULT;
  int maxFrameBytes = NodeOptions.MAX_FRAME_BYTES_DEFAULT;
  int frameIdleTimeoutMs = NodeOptions.FRAME_IDLE_TIMEOUT_MS_DEFAULT;
  int maxClientConnections = NodeOptions.MAX_CLIENT_CONNECTIONS_DEFAULT;
  int maxClientConnectionsPerAddress = NodeOptions.MAX_CLIENT_CONNECTIONS_PER_ADDRESS_DEFAULT;
  int maxInFlightPerConnection = NodeOptions.MAX_IN_FLIGHT_PER_CONNECTION_DEFAULT;
  int maxPendingRequests = NodeOptions.MAX_PENDING_REQUESTS_DEFAULT;
  int channelBatchMaxItems = NodeOptions.CHANNEL_BATCH_MAX_ITEMS_DEFAULT;
  int channelWindow = NodeOptions.CHANNEL_WINDOW_DEFAULT;
  int submitInFlight = NodeOptions.SUBMIT_IN_FLIGHT_DEFAULT;
  int submitBatchMax = NodeOptions.SUBMIT_BATCH_MAX_DEFAULT;
  boolean localSubmit = Boolean.parseBoolean(
      System.getProperty(NodeOptions.LOCAL_SUBMIT_PROPERTY, String.valueOf(NodeOptions.LOCAL_SUBMIT_DEFAULT)));
  long clientExpiryMs = NodeOptions.CLIENT_EXPIRY_MS_DEFAULT;
  int ratisRequestTimeoutMs = NodeOptions.RATIS_REQUEST_TIMEOUT_MS_DEFAULT;
  CodecRegistry registry = CodecRegistry.empty();
  TlsConfig tls;
  boolean insecure;
  int tlsHandshakeTimeoutMs = NodeOptions.TLS_HANDSHAKE_TIMEOUT_MS_DEFAULT;
  RaftTransport raftTransport = NodeOptions.RAFT_TRANSPORT_DEFAULT;
  Function<Object, Identity.Role> roles = r -> null;

  /** A copy of every value (the registry, TLS configuration and roles are immutable, and shared). */
  NodeSettings copy() {
    try {
      return (NodeSettings) clone();
    } catch (CloneNotSupportedException e) {
      throw new AssertionError(e);
    }
  }

  /** Returns {@code v}, or throws if it is not positive. */
  static long positive(long v, String name) {
    if (v <= 0) {
      throw new IllegalArgumentException(name + " must be positive: " + v);
    }
    return v;
  }

  /** Returns {@code v}, or throws the message followed by {@code v} if it is below {@code min}. */
  static long atLeast(long v, long min, String message) {
    if (v < min) {
      throw new IllegalArgumentException(message + v);
    }
    return v;
  }
}
