package io.eyrie.multicast;

import java.util.Locale;
import java.util.Objects;

/**
 * Tunables of a node. Immutable; build with {@link #newBuilder()}. The defaults suit a
 * production-like local cluster; tests shrink the snapshot threshold and segment size. This class
 * owns the defaults, what each setting means and the builder; the values and their checks are
 * held by the package-private {@code NodeSettings}.
 */
public final class NodeOptions {
  /** Default log entries between automatic snapshots. */
  public static final long SNAPSHOT_THRESHOLD_DEFAULT = 20_000;
  /** Default maximum size of a log segment, in bytes. */
  public static final long SEGMENT_SIZE_MAX_DEFAULT = 8L << 20;
  /**
   * Default lower bound of the election timeout. 600-1200 ms (1000-2000 before): in the failover
   * runs of 2026-11-25 (bench/scripts/failover.sh, a node killed under load) the outage at the kill
   * is mostly this timeout, twice when two followers stand at once; the tests' fault runs used
   * 600-1200 all along on this loaded 2-core machine without spurious elections.
   */
  public static final int ELECTION_TIMEOUT_MIN_MS_DEFAULT = 600;
  /** Default upper bound of the election timeout. */
  public static final int ELECTION_TIMEOUT_MAX_MS_DEFAULT = 1200;
  /** Default maximum client frame size, in bytes. */
  public static final int MAX_FRAME_BYTES_DEFAULT = 4 << 20;
  /**
   * Default time a client connection may hold a started, unfinished frame without sending a byte
   * before the node closes it (10 s).
   */
  public static final int FRAME_IDLE_TIMEOUT_MS_DEFAULT = 10_000;
  /**
   * Default time a TLS client connection has to complete its handshake before the node closes it
   * (10 s).
   */
  public static final int TLS_HANDSHAKE_TIMEOUT_MS_DEFAULT = 10_000;
  /** Default maximum number of open client connections per node. */
  public static final int MAX_CLIENT_CONNECTIONS_DEFAULT = 4096;
  /** Default maximum number of open client connections from one remote address. */
  public static final int MAX_CLIENT_CONNECTIONS_PER_ADDRESS_DEFAULT = 1024;
  /**
   * Default maximum number of requests a node works on for one client connection at once; past
   * it the node stops reading that connection until some are answered.
   */
  public static final int MAX_IN_FLIGHT_PER_CONNECTION_DEFAULT = 1024;
  /**
   * Default maximum number of client requests (multicasts and queries) a node has taken and not
   * yet answered, over all connections; past it new ones are answered {@link Status#UNAVAILABLE}
   * ("busy") at once, and the client tries again later.
   */
  public static final int MAX_PENDING_REQUESTS_DEFAULT = 10_000;
  /**
   * System property giving the event-loop threads of every Ratis Netty server and client in the
   * JVM; read once, when the first node or Ratis client starts. Eyrie sets it to
   * {@link #EVENT_LOOP_THREADS_DEFAULT} unless it is set already (see docs/design.md and issue
   * 15's measurements in bench/results/HISTORY.md).
   */
  public static final String EVENT_LOOP_THREADS_PROPERTY = "org.apache.ratis.thirdparty.io.netty.eventLoopThreads";
  /** Default event-loop threads per Ratis Netty server and client. */
  public static final int EVENT_LOOP_THREADS_DEFAULT = 32;
  /** Default maximum number of items in one channel batch. */
  public static final int CHANNEL_BATCH_MAX_ITEMS_DEFAULT = 1024;
  /**
   * Default number of channel batches in flight per channel. One: what accumulates while a batch
   * is in flight goes out together in the next, so under load a batch carries many items (with
   * 4, a 2-group multicast cost about one channel batch per operation; with 1, half as many and
   * 60% less CPU per operation, bench/results/HISTORY.md, issue 15).
   */
  public static final int CHANNEL_WINDOW_DEFAULT = 1;
  /**
   * Default number of start batches in flight per group and node. One, like the channels: on an
   * idle 2-core machine (bench/results/issue15-knobs.md) 1 against 2 gave 1.8x the 1-group and
   * 1.5x the 2-group multicast throughput, with a third fewer log entries and CPU per operation;
   * 4 was worse than 2.
   */
  public static final int SUBMIT_IN_FLIGHT_DEFAULT = 1;
  /**
   * Whether a node writes to a group whose leader is its own replica by handing the request to
   * that replica directly, without Ratis's client RPC (see bench/results/HISTORY.md, "Local
   * submission").
   */
  public static final boolean LOCAL_SUBMIT_DEFAULT = true;
  /** A system property that overrides {@link #LOCAL_SUBMIT_DEFAULT} (for comparing the two in benchmarks). */
  public static final String LOCAL_SUBMIT_PROPERTY = "eyrie.localSubmit";
  /** Default maximum number of starts in one log entry. */
  public static final int SUBMIT_BATCH_MAX_DEFAULT = 512;
  /** Default time an idle client's records are kept, in log time. */
  public static final long CLIENT_EXPIRY_MS_DEFAULT = 30 * 60_000L;
  /** Default timeout of one Ratis request made by a node. */
  public static final int RATIS_REQUEST_TIMEOUT_MS_DEFAULT = 3000;
  /**
   * Default transport of the Raft port: Ratis's Netty RPC through Eyrie's wrapper. gRPC is there
   * to be measured against it ({@link RaftTransport#GRPC}).
   */
  public static final RaftTransport RAFT_TRANSPORT_DEFAULT = RaftTransport.NETTY;

  /**
   * The transport of a node's Raft port: what its Ratis servers and the Ratis clients it opens
   * speak to each other ({@link NodeOptions#raftTransport()}). Every node of a cluster must use the
   * same one: a gRPC Raft port does not speak Netty RPC, nor the other way round.
   */
  public enum RaftTransport {
    /**
     * Ratis's Netty RPC, through Eyrie's wrapper (the default): mutual TLS with a role check, the
     * Raft port's frame limit, and one call-id-0 request per peer at a time so that many groups per
     * server do not break each other's votes and snapshot installations.
     */
    NETTY,
    /**
     * Ratis's gRPC transport ({@code ratis-grpc}), for comparison with {@link #NETTY}: mutual TLS
     * with the same role check, and gRPC's own message size limit in place of the frame limit.
     */
    GRPC;

    /** The name as configuration files and flags spell it: {@code netty} or {@code grpc}. */
    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The transport of a label.
     *
     * @param label {@code netty} or {@code grpc}, in any case
     * @return the transport
     * @throws IllegalArgumentException saying which values are taken
     */
    public static RaftTransport of(String label) {
      for (RaftTransport t : values()) {
        if (t.label().equalsIgnoreCase(label == null ? "" : label.trim())) {
          return t;
        }
      }
      throw new IllegalArgumentException("expects netty or grpc, not '" + label + "'");
    }
  }

  /** The values, never changed once built. */
  private final NodeSettings s;

  private NodeOptions(NodeSettings s) {
    this.s = s;
  }

  /** Returns options with every default. */
  public static NodeOptions defaults() {
    return newBuilder().build();
  }

  /** Returns a builder initialized with the defaults. */
  public static Builder newBuilder() {
    return new Builder(new NodeSettings());
  }

  /** Returns a builder initialized with these options. */
  public Builder toBuilder() {
    return new Builder(s.copy());
  }

  /** Log entries between automatic snapshots. */
  public long snapshotThreshold() {
    return s.snapshotThreshold;
  }

  /** Maximum log segment size in bytes (closed segments below a snapshot are purged). */
  public long segmentSizeMax() {
    return s.segmentSizeMax;
  }

  /**
   * True (the default) if a node that is closed takes a snapshot of each replica first, so that
   * it starts again without replaying its logs. A node that is killed takes none.
   */
  public boolean snapshotOnStop() {
    return s.snapshotOnStop;
  }

  /** Lower bound of the Raft election timeout. */
  public int electionTimeoutMinMs() {
    return s.electionTimeoutMinMs;
  }

  /** Upper bound of the Raft election timeout. */
  public int electionTimeoutMaxMs() {
    return s.electionTimeoutMaxMs;
  }

  /** Largest client frame accepted, in bytes. */
  public int maxFrameBytes() {
    return s.maxFrameBytes;
  }

  /**
   * How long, in milliseconds, a client connection may hold a started frame without sending any
   * of its remaining bytes; then the node answers BAD_REQUEST and closes it. Time during which the
   * node itself stopped reading the connection (back-pressure) does not count.
   */
  public int frameIdleTimeoutMs() {
    return s.frameIdleTimeoutMs;
  }

  /** Most open client connections per node; the node closes further ones as it accepts them. */
  public int maxClientConnections() {
    return s.maxClientConnections;
  }

  /** Most open client connections from one remote address; the node closes further ones as it accepts them. */
  public int maxClientConnectionsPerAddress() {
    return s.maxClientConnectionsPerAddress;
  }

  /**
   * Most requests the node works on for one client connection at once; with that many
   * unanswered it stops reading the connection (back-pressure) until one is answered.
   */
  public int maxInFlightPerConnection() {
    return s.maxInFlightPerConnection;
  }

  /**
   * Most client multicasts and queries the node has taken and not yet answered, over all its
   * connections; past it new ones are answered {@link Status#UNAVAILABLE} with an error that
   * starts with "busy", and the client tries again later.
   */
  public int maxPendingRequests() {
    return s.maxPendingRequests;
  }

  /** Most items in one channel batch. */
  public int channelBatchMaxItems() {
    return s.channelBatchMaxItems;
  }

  /** Channel batches in flight per channel. */
  public int channelWindow() {
    return s.channelWindow;
  }

  /** Start batches in flight per group and node. */
  public int submitInFlight() {
    return s.submitInFlight;
  }

  /** Most client starts in one log entry. */
  public int submitBatchMax() {
    return s.submitBatchMax;
  }

  /**
   * Whether writes to a group this node's replica leads go to that replica directly instead of
   * through a Ratis client ({@link #LOCAL_SUBMIT_DEFAULT}).
   */
  public boolean localSubmit() {
    return s.localSubmit;
  }

  /** How long, in log time, an idle client's exactly-once records are kept. */
  public long clientExpiryMs() {
    return s.clientExpiryMs;
  }

  /** Timeout of one Ratis request made by the node (submissions, channel batches). */
  public int ratisRequestTimeoutMs() {
    return s.ratisRequestTimeoutMs;
  }

  /**
   * The transport of the node's Raft port, which its Ratis servers and every Ratis client it
   * opens for its groups use ({@link #RAFT_TRANSPORT_DEFAULT}, Netty). Every node of a cluster
   * must use the same one.
   */
  public RaftTransport raftTransport() {
    return s.raftTransport;
  }

  /** The application's codec registrations. */
  public CodecRegistry registry() {
    return s.registry;
  }

  /**
   * The mutual TLS of the node's ports, or null (the default) for plaintext. With TLS the client
   * port requires a client certificate signed by the configuration's CA, reads the peer's
   * {@link Identity} from it, and lets each identity send only what its role allows ({@link
   * NodeApp#requiredRole}): clients their application's commands, admins and nodes everything.
   * The Raft port requires a {@code node} certificate, and the Ratis clients the node opens
   * present this one, which must therefore be a node's.
   */
  public TlsConfig tls() {
    return s.tls;
  }

  /**
   * True if the node may start without {@link #tls()} on an address that is not loopback
   * (default false: such a node refuses to start, saying so in one line).
   */
  public boolean insecure() {
    return s.insecure;
  }

  /**
   * How long, in milliseconds, a client connection has to complete its TLS handshake; then the
   * node closes it. Only with {@link #tls()}. The Raft port's handshakes take this too, but never
   * less than the default.
   */
  public int tlsHandshakeTimeoutMs() {
    return s.tlsHandshakeTimeoutMs;
  }

  /** The role each decoded request needs, from the hosted {@link NodeApp} (package-private). */
  java.util.function.Function<Object, Identity.Role> roles() {
    return s.roles;
  }

  /** Builds {@link NodeOptions}. */
  public static final class Builder {
    private final NodeSettings s;

    private Builder(NodeSettings s) {
      this.s = s;
    }

    /**
     * Sets the mutual TLS of the client and Raft ports ({@link NodeOptions#tls()}); null for plaintext
     * (the default). Use the node's own certificate: {@code TlsConfig.fromDir(certs, "node-1")}.
     */
    public Builder tls(TlsConfig v) {
      s.tls = v;
      return this;
    }

    /**
     * Lets the node start without TLS on an address that is not loopback ({@link
     * NodeOptions#insecure()}); for a trusted network only.
     */
    public Builder insecure(boolean v) {
      s.insecure = v;
      return this;
    }

    /** Sets how long a client connection has to complete its TLS handshake (ms, at least 1). */
    public Builder tlsHandshakeTimeoutMs(int v) {
      s.tlsHandshakeTimeoutMs = (int) NodeSettings.positive(v, "tlsHandshakeTimeoutMs");
      return this;
    }

    /** Sets the role each decoded request needs (from the hosted {@link NodeApp}; package-private). */
    Builder roles(java.util.function.Function<Object, Identity.Role> v) {
      s.roles = Objects.requireNonNull(v, "roles");
      return this;
    }

    /** Sets the log entries between automatic snapshots (at least 1). */
    public Builder snapshotThreshold(long v) {
      s.snapshotThreshold = NodeSettings.positive(v, "snapshotThreshold");
      return this;
    }

    /**
     * Sets whether closing a node takes a snapshot of each replica first (default true). Tests
     * turn it off to have a closed node restart as a killed one does: replaying its logs from the
     * last automatic snapshot, or from the start.
     */
    public Builder snapshotOnStop(boolean v) {
      s.snapshotOnStop = v;
      return this;
    }

    /** Sets the maximum log segment size in bytes (at least 16 KiB). */
    public Builder segmentSizeMax(long v) {
      s.segmentSizeMax = NodeSettings.atLeast(v, 16 << 10, "segmentSizeMax must be at least 16 KiB: ");
      return this;
    }

    /** Sets the election timeout bounds (min at least 100 ms, max above min). */
    public Builder electionTimeoutMs(int min, int max) {
      if (min < 100 || max <= min) {
        throw new IllegalArgumentException("election timeout needs 100 <= min < max: " + min + ", " + max);
      }
      s.electionTimeoutMinMs = min;
      s.electionTimeoutMaxMs = max;
      return this;
    }

    /** Sets the largest client frame accepted, in bytes (at least 1 KiB). */
    public Builder maxFrameBytes(int v) {
      s.maxFrameBytes = (int) NodeSettings.atLeast(v, 1024, "maxFrameBytes must be at least 1024: ");
      return this;
    }

    /** Sets how long a client connection may hold a started frame without sending a byte of it (ms, at least 1). */
    public Builder frameIdleTimeoutMs(int v) {
      s.frameIdleTimeoutMs = (int) NodeSettings.positive(v, "frameIdleTimeoutMs");
      return this;
    }

    /** Sets the most open client connections per node. */
    public Builder maxClientConnections(int v) {
      s.maxClientConnections = (int) NodeSettings.positive(v, "maxClientConnections");
      return this;
    }

    /** Sets the most open client connections from one remote address. */
    public Builder maxClientConnectionsPerAddress(int v) {
      s.maxClientConnectionsPerAddress = (int) NodeSettings.positive(v, "maxClientConnectionsPerAddress");
      return this;
    }

    /** Sets the most requests the node works on for one client connection at once. */
    public Builder maxInFlightPerConnection(int v) {
      s.maxInFlightPerConnection = (int) NodeSettings.positive(v, "maxInFlightPerConnection");
      return this;
    }

    /** Sets the most client requests the node has taken and not yet answered, over all connections. */
    public Builder maxPendingRequests(int v) {
      s.maxPendingRequests = (int) NodeSettings.positive(v, "maxPendingRequests");
      return this;
    }

    /** Sets the most items in one channel batch. */
    public Builder channelBatchMaxItems(int v) {
      s.channelBatchMaxItems = (int) NodeSettings.positive(v, "channelBatchMaxItems");
      return this;
    }

    /** Sets the channel batches in flight per channel. */
    public Builder channelWindow(int v) {
      s.channelWindow = (int) NodeSettings.positive(v, "channelWindow");
      return this;
    }

    /** Sets the start batches in flight per group and node. */
    public Builder submitInFlight(int v) {
      s.submitInFlight = (int) NodeSettings.positive(v, "submitInFlight");
      return this;
    }

    /** Sets the most client starts in one log entry. */
    public Builder submitBatchMax(int v) {
      s.submitBatchMax = (int) NodeSettings.positive(v, "submitBatchMax");
      return this;
    }

    /** Sets whether writes to a group led by this node's replica skip the client RPC (see {@link NodeOptions#localSubmit()}). */
    public Builder localSubmit(boolean v) {
      s.localSubmit = v;
      return this;
    }

    /** Sets how long, in log time, an idle client's records are kept. */
    public Builder clientExpiryMs(long v) {
      s.clientExpiryMs = NodeSettings.positive(v, "clientExpiryMs");
      return this;
    }

    /** Sets the transport of the Raft port ({@link NodeOptions#raftTransport()}; every node of a cluster the same). */
    public Builder raftTransport(RaftTransport v) {
      s.raftTransport = Objects.requireNonNull(v, "raftTransport");
      return this;
    }

    /** Sets the timeout of one Ratis request made by the node. */
    public Builder ratisRequestTimeoutMs(int v) {
      s.ratisRequestTimeoutMs = (int) NodeSettings.positive(v, "ratisRequestTimeoutMs");
      return this;
    }

    /**
     * Sets the application's codec registrations. Package-private: a node and an embedded cluster
     * take them from the {@link NodeApp} they host, so that the registrations and the deliverers
     * come from one place.
     */
    Builder registry(CodecRegistry v) {
      s.registry = Objects.requireNonNull(v, "registry");
      return this;
    }

    /** Returns the options. */
    public NodeOptions build() {
      return new NodeOptions(s.copy());
    }
  }
}
