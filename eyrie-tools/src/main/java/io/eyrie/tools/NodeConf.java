package io.eyrie.tools;

import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.multicast.TlsConfig;
import io.eyrie.tools.NodeConfigKeys.Key;
import java.io.IOException;
import java.io.PrintStream;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import java.util.function.BiConsumer;

/**
 * Owns a node launcher's effective configuration: the value of every {@link NodeConfigKeys} key
 * and where it came from. A flag wins over the configuration file ({@code --conf FILE}), the file
 * over the cluster file (the node line's {@code metrics=P}, its {@code tls DIR} line), and these
 * over the default. Reads and checks the file, builds the {@link NodeOptions}, and prints the
 * whole for {@code --print-conf}.
 */
final class NodeConf {

  /** Where a value came from. */
  enum Source {
    DEFAULT("default"), CLUSTER_FILE("cluster file"), CONF_FILE("conf file"), FLAG("flag");

    private final String label;

    Source(String label) {
      this.label = label;
    }
  }

  /** One key's effective value ("" for none) and its source. */
  record Setting(String value, Source source) {}

  /** The keys each applied through one {@link NodeOptions.Builder} setter. */
  private static final Map<Key, BiConsumer<NodeOptions.Builder, Object>> SETTERS = new LinkedHashMap<>();

  static {
    SETTERS.put(NodeConfigKeys.SNAPSHOT_THRESHOLD, (b, v) -> b.snapshotThreshold((Long) v));
    SETTERS.put(NodeConfigKeys.SEGMENT_SIZE_MAX, (b, v) -> b.segmentSizeMax((Long) v));
    SETTERS.put(NodeConfigKeys.RATIS_REQUEST_TIMEOUT, (b, v) -> b.ratisRequestTimeoutMs(asInt(v)));
    SETTERS.put(NodeConfigKeys.MAX_FRAME_BYTES, (b, v) -> b.maxFrameBytes(asInt(v)));
    SETTERS.put(NodeConfigKeys.FRAME_IDLE_TIMEOUT, (b, v) -> b.frameIdleTimeoutMs(asInt(v)));
    SETTERS.put(NodeConfigKeys.MAX_CLIENT_CONNECTIONS, (b, v) -> b.maxClientConnections(asInt(v)));
    SETTERS.put(NodeConfigKeys.MAX_CLIENT_CONNECTIONS_PER_ADDRESS,
        (b, v) -> b.maxClientConnectionsPerAddress(asInt(v)));
    SETTERS.put(NodeConfigKeys.MAX_IN_FLIGHT_PER_CONNECTION, (b, v) -> b.maxInFlightPerConnection(asInt(v)));
    SETTERS.put(NodeConfigKeys.MAX_PENDING_REQUESTS, (b, v) -> b.maxPendingRequests(asInt(v)));
    SETTERS.put(NodeConfigKeys.CLIENT_EXPIRY, (b, v) -> b.clientExpiryMs((Long) v));
    SETTERS.put(NodeConfigKeys.CHANNEL_BATCH_MAX_ITEMS, (b, v) -> b.channelBatchMaxItems(asInt(v)));
    SETTERS.put(NodeConfigKeys.CHANNEL_WINDOW, (b, v) -> b.channelWindow(asInt(v)));
    SETTERS.put(NodeConfigKeys.SUBMIT_IN_FLIGHT, (b, v) -> b.submitInFlight(asInt(v)));
    SETTERS.put(NodeConfigKeys.SUBMIT_BATCH_MAX, (b, v) -> b.submitBatchMax(asInt(v)));
    SETTERS.put(NodeConfigKeys.INSECURE, (b, v) -> b.insecure((Boolean) v));
    SETTERS.put(NodeConfigKeys.TLS_HANDSHAKE_TIMEOUT, (b, v) -> b.tlsHandshakeTimeoutMs(asInt(v)));
    SETTERS.put(NodeConfigKeys.RAFT_TRANSPORT, (b, v) -> b.raftTransport(io.eyrie.multicast.NodeOptions.RaftTransport.of((String) v)));
  }

  private final ClusterConfig cluster;
  private final int id;
  private final Path confFile;
  private final Map<Key, Setting> settings;

  private NodeConf(ClusterConfig cluster, int id, Path confFile, Map<Key, Setting> settings) {
    this.cluster = cluster;
    this.id = id;
    this.confFile = confFile;
    this.settings = settings;
  }

  /**
   * Reads a node configuration file: every key must be known and every value valid. Relative
   * paths are resolved against the file's directory; an empty value of a key without a fixed
   * default (as the template lists them) is left out.
   *
   * @param file the file, in {@link Properties} syntax
   * @return the values it sets, trimmed, by key, in {@link NodeConfigKeys#ALL}'s order
   * @throws Args.UsageException naming the file and the unknown key or the bad value, in one line
   */
  static Map<Key, String> read(Path file) throws Args.UsageException {
    if (!Files.isRegularFile(file)) {
      throw new Args.UsageException("no configuration file " + file);
    }
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      p.load(r);
    } catch (IOException | IllegalArgumentException e) {
      throw new Args.UsageException("cannot read " + file + ": " + e.getMessage());
    }
    for (String name : new TreeSet<>(p.stringPropertyNames())) {
      if (NodeConfigKeys.byName(name) == null) {
        String near = NodeConfigKeys.closest(name);
        throw new Args.UsageException(file + ": unknown key '" + name + "'"
            + (near == null ? "" : " (did you mean '" + near + "'?)"));
      }
    }
    Path base = file.toAbsolutePath().getParent();
    Map<Key, String> values = new LinkedHashMap<>();
    for (Key k : NodeConfigKeys.ALL) {
      String v = p.getProperty(k.name());
      if (v == null || (v.isBlank() && k.defaultValue().isEmpty())) {
        continue;
      }
      v = v.trim();
      check(k, v, file + ": bad value for " + k.name());
      values.put(k, k.type() == NodeConfigKeys.Type.PATH ? base.resolve(v).normalize().toString() : v);
    }
    return values;
  }

  /**
   * Resolves a launcher's command line: {@code --cluster}, {@code --id}, {@code --conf} and the
   * flags of {@link NodeConfigKeys} keys ({@code --data}, {@code --metrics-port}, {@code
   * --raft-transport}, {@code --insecure}, and {@code --snapshot-threshold} where the launcher takes it).
   *
   * @param a the parsed command line (no positional arguments)
   * @param dataPrefix the default storage directory, without the node's id
   * @return the effective configuration
   * @throws Args.UsageException for a wrong command line or configuration file, in one line
   */
  static NodeConf resolve(Args a, String dataPrefix) throws Args.UsageException {
    a.noPositional();
    ClusterConfig cluster = Tools.cluster(a);
    int id = a.integer("id", -1, 1, Integer.MAX_VALUE);
    if (id < 0) {
      throw new Args.UsageException("option --id is required");
    }
    if (!cluster.nodes().containsKey(id)) {
      throw new Args.UsageException("the cluster file has no node " + id + " (nodes " + cluster.nodes().keySet() + ")");
    }
    Path confFile = a.has("conf") ? Path.of(a.string("conf", null)).toAbsolutePath().normalize() : null;
    Map<Key, String> file = confFile == null ? Map.of() : read(confFile);
    Map<Key, Setting> settings = new LinkedHashMap<>();
    for (Key k : NodeConfigKeys.ALL) {
      Setting s = new Setting(k.defaultValue(), Source.DEFAULT);
      if (k == NodeConfigKeys.DATA_DIR) {
        s = new Setting(dataPrefix + id, Source.DEFAULT);
      } else if (k == NodeConfigKeys.METRICS_PORT) {
        int p = cluster.metricsPort(id);
        s = new Setting(Integer.toString(p), p > 0 ? Source.CLUSTER_FILE : Source.DEFAULT);
      } else if (k == NodeConfigKeys.TLS_DIR && cluster.tlsDir() != null) {
        s = new Setting(cluster.tlsDir().toString(), Source.CLUSTER_FILE);
      }
      if (file.containsKey(k)) {
        s = new Setting(file.get(k), Source.CONF_FILE);
      }
      if (k.flag() != null && a.has(k.flag())) {
        String v = k.type() == NodeConfigKeys.Type.BOOLEAN ? "true" : a.string(k.flag(), "").trim();
        check(k, v, "bad value for --" + k.flag());
        s = new Setting(v, Source.FLAG);
      }
      if (k == NodeConfigKeys.DATA_DIR) {
        s = new Setting(Path.of(s.value()).toAbsolutePath().normalize().toString(), s.source());
      }
      settings.put(k, s);
    }
    return new NodeConf(cluster, id, confFile, settings);
  }

  /** Returns the cluster file's configuration. */
  ClusterConfig cluster() {
    return cluster;
  }

  /** Returns this node's id. */
  int id() {
    return id;
  }

  /** Returns every key's effective value and source, in {@link NodeConfigKeys#ALL}'s order. */
  Map<Key, Setting> settings() {
    return settings;
  }

  /** Returns the node's storage directory, absolute. */
  Path dataDir() {
    return Path.of(settings.get(NodeConfigKeys.DATA_DIR).value());
  }

  /** Returns the port of the node's HTTP endpoint; 0 for none. */
  int metricsPort() {
    return Integer.parseInt(settings.get(NodeConfigKeys.METRICS_PORT).value());
  }

  /**
   * Builds the node's options: {@code base} with every value that is not a default (a default
   * leaves {@code base}'s value), and the TLS files read and checked.
   *
   * @param base the launcher's options
   * @return the node's options
   * @throws Args.UsageException naming the key and value that do not fit, or the file that is
   *     missing or wrong
   */
  NodeOptions options(NodeOptions base) throws Args.UsageException {
    NodeOptions.Builder b = base.toBuilder();
    for (Map.Entry<Key, BiConsumer<NodeOptions.Builder, Object>> e : SETTERS.entrySet()) {
      Setting s = settings.get(e.getKey());
      if (s.source() != Source.DEFAULT) {
        try {
          e.getValue().accept(b, e.getKey().parse(s.value()));
        } catch (IllegalArgumentException x) {
          throw new Args.UsageException("bad value for " + e.getKey().name() + ": '" + s.value() + "' ("
              + x.getMessage() + ")");
        }
      }
    }
    Setting min = settings.get(NodeConfigKeys.ELECTION_TIMEOUT_MIN);
    Setting max = settings.get(NodeConfigKeys.ELECTION_TIMEOUT_MAX);
    if (min.source() != Source.DEFAULT || max.source() != Source.DEFAULT) {
      int lo = Integer.parseInt(min.value());
      int hi = Integer.parseInt(max.value());
      if (hi <= lo) {
        throw new Args.UsageException("bad value for " + NodeConfigKeys.ELECTION_TIMEOUT_MAX.name() + ": '" + hi
            + "' (must be above " + NodeConfigKeys.ELECTION_TIMEOUT_MIN.name() + " = " + lo + ")");
      }
      b.electionTimeoutMs(lo, hi);
    }
    try {
      b.tls(tls());
    } catch (IllegalArgumentException e) {
      throw new Args.UsageException(e.getMessage());
    }
    return b.build();
  }

  /** The TLS configuration of the node: the three files, else the directory, else none. */
  private TlsConfig tls() throws Args.UsageException {
    Key[] files = {NodeConfigKeys.TLS_CA_FILE, NodeConfigKeys.TLS_CERT_FILE, NodeConfigKeys.TLS_KEY_FILE};
    int given = 0;
    for (Key k : files) {
      given += settings.get(k).value().isEmpty() ? 0 : 1;
    }
    if (given > 0 && given < files.length) {
      throw new Args.UsageException("tls.ca.file, tls.cert.file and tls.key.file go together: set all three or none");
    }
    if (given == files.length) {
      return TlsConfig.of(path(files[0]), path(files[1]), path(files[2]));
    }
    String dir = settings.get(NodeConfigKeys.TLS_DIR).value();
    return dir.isEmpty() ? null : TlsConfig.fromDir(Path.of(dir), "node-" + id);
  }

  private Path path(Key k) {
    return Path.of(settings.get(k).value());
  }

  /**
   * Prints every key, its effective value ("-" for none) and its source, one per line after a
   * header line.
   *
   * @param out where to print
   */
  void print(PrintStream out) {
    out.printf("# eyrie node %d, configuration file %s: KEY VALUE SOURCE%n", id,
        confFile == null ? "none (--conf FILE)" : confFile.toString());
    for (Map.Entry<Key, Setting> e : settings.entrySet()) {
      Setting s = e.getValue();
      String source = s.source() == Source.FLAG ? "flag --" + e.getKey().flag() : s.source().label;
      out.printf("%-36s %-30s %s%n", e.getKey().name(), s.value().isEmpty() ? "-" : s.value(), source);
    }
    out.flush();
  }

  private static void check(Key k, String value, String what) throws Args.UsageException {
    try {
      k.parse(value);
    } catch (IllegalArgumentException e) {
      throw new Args.UsageException(what + ": '" + value + "' (" + e.getMessage() + ")");
    }
  }

  private static int asInt(Object v) {
    return Math.toIntExact((Long) v);
  }
}
