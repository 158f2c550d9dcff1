package io.eyrie.tools;

import io.eyrie.multicast.NodeOptions;
import io.eyrie.multicast.NodeOptions.RaftTransport;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Owns the keys of a node's configuration file ({@code eyrie node --conf node.properties}), in
 * the style of Ratis's {@code *ConfigKeys}: one constant per key with its name, type, default and
 * a one-line description, and the parsing of one value. {@link NodeConf} reads the file and
 * applies the keys onto {@link NodeOptions}; {@code conf/node.properties} lists every key (a test
 * keeps it in step with {@link #ALL}).
 */
public final class NodeConfigKeys {
  private NodeConfigKeys() {}

  /** The type of a key's value. */
  public enum Type {
    /** A whole number within the key's bounds. */
    NUMBER,
    /** {@code true} or {@code false}. */
    BOOLEAN,
    /** A file or directory, relative to the configuration file's directory. */
    PATH,
    /** One of a few words ({@link #choices}), in lower case. */
    CHOICE
  }

  /**
   * One key.
   *
   * @param name its name in the file
   * @param type its value's type
   * @param defaultValue its default as the template shows it; "" when none is fixed (the node's
   *     id or the cluster file decides it), and then an empty value in the file is no value
   * @param doc one line on what it sets, and its default when the cluster file or the node's id
   *     decides it
   * @param min the least value of a number
   * @param max the greatest value of a number
   * @param flag the command-line option that sets it too and wins over the file, or null
   */
  public record Key(String name, Type type, String defaultValue, String doc, long min, long max, String flag) {

    /**
     * Parses a value of this key.
     *
     * @param value the text, trimmed
     * @return a {@code Long}, {@code Boolean} or {@code String}
     * @throws IllegalArgumentException saying what the key expects
     */
    public Object parse(String value) {
      switch (type) {
        case BOOLEAN:
          String b = value.toLowerCase(Locale.ROOT);
          if (b.equals("true") || b.equals("false")) {
            return Boolean.valueOf(b);
          }
          throw new IllegalArgumentException("expects true or false");
        case NUMBER:
          long v;
          try {
            v = Long.parseLong(value.replace("_", ""));
          } catch (NumberFormatException e) {
            throw new IllegalArgumentException("expects a whole number from " + min + " to " + max);
          }
          if (v < min || v > max) {
            throw new IllegalArgumentException("expects a whole number from " + min + " to " + max);
          }
          return v;
        case CHOICE:
          String w = value.toLowerCase(Locale.ROOT);
          if (choices(this).contains(w)) {
            return w;
          }
          throw new IllegalArgumentException("expects " + String.join(" or ", choices(this)));
        default:
          return value;
      }
    }
  }

  /** The words a {@link Type#CHOICE} key takes, the default first; empty for other keys. */
  public static List<String> choices(Key k) {
    return CHOICES.getOrDefault(k.name(), List.of());
  }

  private static final long INT = Integer.MAX_VALUE;
  /** Each {@link Type#CHOICE} key's words, filled by {@link #choice} (before the keys below). */
  private static final java.util.Map<String, List<String>> CHOICES = new java.util.HashMap<>();

  private static Key number(String name, long def, long min, long max, String doc) {
    return new Key(name, Type.NUMBER, Long.toString(def), doc, min, max, null);
  }

  /** A key that takes one of {@code words} (the first is the default), also set by the flag {@code --flag}. */
  private static Key choice(String name, List<String> words, String doc, String flag) {
    CHOICES.put(name, List.copyOf(words));
    return new Key(name, Type.CHOICE, words.get(0), doc, 0, 0, flag);
  }

  /** The node's Raft logs and snapshots; default {@code data/node-N} ({@code --data} wins). */
  public static final Key DATA_DIR = new Key("data.dir", Type.PATH, "",
      "the node's Raft logs and snapshots (default data/node-N, kept across restarts)", 0, 0, "data");
  /** The port of {@code /metrics}, {@code /health} and {@code /ready}; 0 for none. */
  public static final Key METRICS_PORT = new Key("metrics.port", Type.NUMBER, "",
      "the port of /metrics, /health and /ready, 0 for none (default: the node line's metrics=P in the"
          + " cluster file, else none)", 0, 65535, "metrics-port");
  /** Lower bound of the Raft election timeout, ms. */
  public static final Key ELECTION_TIMEOUT_MIN = number("raft.election.timeout.min.ms",
      NodeOptions.ELECTION_TIMEOUT_MIN_MS_DEFAULT, 100, INT, "lower bound of the Raft election timeout, ms");
  /** Upper bound of the Raft election timeout, ms. */
  public static final Key ELECTION_TIMEOUT_MAX = number("raft.election.timeout.max.ms",
      NodeOptions.ELECTION_TIMEOUT_MAX_MS_DEFAULT, 101, INT,
      "upper bound of the Raft election timeout, ms (above the lower bound)");
  /** Log entries between automatic snapshots. */
  public static final Key SNAPSHOT_THRESHOLD = new Key("raft.snapshot.threshold", Type.NUMBER,
      Long.toString(NodeOptions.SNAPSHOT_THRESHOLD_DEFAULT), "log entries between automatic snapshots", 1,
      Long.MAX_VALUE, "snapshot-threshold");
  /** Largest Raft log segment, bytes. */
  public static final Key SEGMENT_SIZE_MAX = number("raft.segment.size.max.bytes",
      NodeOptions.SEGMENT_SIZE_MAX_DEFAULT, 16 << 10, Long.MAX_VALUE,
      "largest Raft log segment, bytes (closed segments below a snapshot are purged)");
  /** Timeout of one Ratis request the node makes, ms. */
  public static final Key RATIS_REQUEST_TIMEOUT = number("raft.request.timeout.ms",
      NodeOptions.RATIS_REQUEST_TIMEOUT_MS_DEFAULT, 1, INT,
      "timeout of one Ratis request the node makes (submissions, channel batches), ms");
  /** The transport of the Raft port: netty (the default) or grpc, the same on every node. */
  public static final Key RAFT_TRANSPORT = choice("raft.transport", java.util.stream.Stream.concat(
      java.util.stream.Stream.of(NodeOptions.RAFT_TRANSPORT_DEFAULT), java.util.Arrays.stream(RaftTransport.values())
          .filter(t -> t != NodeOptions.RAFT_TRANSPORT_DEFAULT)).map(RaftTransport::label).toList(),
      "the Raft port's transport: netty (Eyrie's Netty RPC) or grpc (Ratis's gRPC, for comparison); every node"
          + " of a cluster the same", "raft-transport");
  /** Largest client frame accepted, bytes. */
  public static final Key MAX_FRAME_BYTES = number("client.frame.max.bytes",
      NodeOptions.MAX_FRAME_BYTES_DEFAULT, 1024, INT, "largest client frame the node accepts, bytes");
  /** How long a client may hold a started frame without sending a byte of it, ms. */
  public static final Key FRAME_IDLE_TIMEOUT = number("client.frame.idle.timeout.ms",
      NodeOptions.FRAME_IDLE_TIMEOUT_MS_DEFAULT, 1, INT,
      "how long a client connection may hold a started frame without sending a byte of it, ms");
  /** Most open client connections per node. */
  public static final Key MAX_CLIENT_CONNECTIONS = number("client.connections.max",
      NodeOptions.MAX_CLIENT_CONNECTIONS_DEFAULT, 1, INT, "most open client connections of the node");
  /** Most open client connections from one remote address. */
  public static final Key MAX_CLIENT_CONNECTIONS_PER_ADDRESS = number("client.connections.per.address.max",
      NodeOptions.MAX_CLIENT_CONNECTIONS_PER_ADDRESS_DEFAULT, 1, INT,
      "most open client connections from one remote address");
  /** Most requests the node works on for one client connection at once. */
  public static final Key MAX_IN_FLIGHT_PER_CONNECTION = number("client.in.flight.per.connection.max",
      NodeOptions.MAX_IN_FLIGHT_PER_CONNECTION_DEFAULT, 1, INT,
      "most requests the node works on for one connection at once (then it stops reading it)");
  /** Most client requests taken and not yet answered, over all connections. */
  public static final Key MAX_PENDING_REQUESTS = number("client.pending.requests.max",
      NodeOptions.MAX_PENDING_REQUESTS_DEFAULT, 1, INT,
      "most client requests taken and not yet answered, over all connections (then: busy)");
  /** How long, in log time, an idle client's exactly-once records are kept, ms. */
  public static final Key CLIENT_EXPIRY = number("client.expiry.ms", NodeOptions.CLIENT_EXPIRY_MS_DEFAULT, 1,
      Long.MAX_VALUE, "how long, in log time, an idle client's exactly-once records are kept, ms");
  /** Most items in one channel batch. */
  public static final Key CHANNEL_BATCH_MAX_ITEMS = number("channel.batch.max.items",
      NodeOptions.CHANNEL_BATCH_MAX_ITEMS_DEFAULT, 1, INT, "most items in one channel batch");
  /** Channel batches in flight per channel. */
  public static final Key CHANNEL_WINDOW = number("channel.window", NodeOptions.CHANNEL_WINDOW_DEFAULT, 1, INT,
      "channel batches in flight per channel");
  /** Start batches in flight per group and node. */
  public static final Key SUBMIT_IN_FLIGHT = number("submit.in.flight", NodeOptions.SUBMIT_IN_FLIGHT_DEFAULT, 1,
      INT, "start batches in flight per group and node");
  /** Most client starts in one log entry. */
  public static final Key SUBMIT_BATCH_MAX = number("submit.batch.max", NodeOptions.SUBMIT_BATCH_MAX_DEFAULT, 1,
      INT, "most client starts in one log entry");
  /** The certificates' directory ({@code eyrie certs --out DIR}); the node uses DIR/node-N.pem. */
  public static final Key TLS_DIR = new Key("tls.dir", Type.PATH, "",
      "mutual TLS with DIR/ca.pem, DIR/node-N.pem and DIR/node-N-key.pem (default: the cluster file's"
          + " tls DIR line, else none)", 0, 0, null);
  /** The CA certificate file; with the other two files it replaces {@link #TLS_DIR}. */
  public static final Key TLS_CA_FILE = new Key("tls.ca.file", Type.PATH, "",
      "the CA's PEM certificate; tls.ca.file, tls.cert.file and tls.key.file together replace tls.dir", 0, 0,
      null);
  /** This node's certificate file. */
  public static final Key TLS_CERT_FILE = new Key("tls.cert.file", Type.PATH, "",
      "this node's PEM certificate (a node certificate of eyrie certs)", 0, 0, null);
  /** This node's private key file. */
  public static final Key TLS_KEY_FILE = new Key("tls.key.file", Type.PATH, "",
      "this node's PEM PKCS#8 private key, unencrypted", 0, 0, null);
  /** Whether a node without TLS may start on an address that is not loopback. */
  public static final Key INSECURE = new Key("tls.insecure", Type.BOOLEAN, "false",
      "start without TLS although the node's address is not loopback (trusted networks only)", 0, 0,
      "insecure");
  /** How long a client connection has to complete its TLS handshake, ms. */
  public static final Key TLS_HANDSHAKE_TIMEOUT = number("tls.handshake.timeout.ms",
      NodeOptions.TLS_HANDSHAKE_TIMEOUT_MS_DEFAULT, 1, INT,
      "how long a connection has to complete its TLS handshake, ms");

  /** Every key, in the template's order. */
  public static final List<Key> ALL = List.of(DATA_DIR, METRICS_PORT, ELECTION_TIMEOUT_MIN, ELECTION_TIMEOUT_MAX,
      SNAPSHOT_THRESHOLD, SEGMENT_SIZE_MAX, RATIS_REQUEST_TIMEOUT, RAFT_TRANSPORT, MAX_FRAME_BYTES, FRAME_IDLE_TIMEOUT,
      MAX_CLIENT_CONNECTIONS, MAX_CLIENT_CONNECTIONS_PER_ADDRESS, MAX_IN_FLIGHT_PER_CONNECTION, MAX_PENDING_REQUESTS,
      CLIENT_EXPIRY, CHANNEL_BATCH_MAX_ITEMS, CHANNEL_WINDOW, SUBMIT_IN_FLIGHT, SUBMIT_BATCH_MAX, TLS_DIR,
      TLS_CA_FILE, TLS_CERT_FILE, TLS_KEY_FILE, INSECURE, TLS_HANDSHAKE_TIMEOUT);

  private static final Map<String, Key> BY_NAME = ALL.stream().collect(Collectors.toMap(Key::name,
      Function.identity()));

  /** Returns the key of this name, or null. */
  public static Key byName(String name) {
    return BY_NAME.get(name);
  }

  /** Returns the known key closest in spelling to {@code name}, or null if none is close. */
  static String closest(String name) {
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (Key k : ALL) {
      int d = distance(name, k.name());
      if (d < bestDistance) {
        bestDistance = d;
        best = k.name();
      }
    }
    return bestDistance <= Math.max(3, name.length() / 3) ? best : null;
  }

  /** Levenshtein distance. */
  private static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int sub = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        cur[j] = Math.min(sub, Math.min(prev[j], cur[j - 1]) + 1);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}
