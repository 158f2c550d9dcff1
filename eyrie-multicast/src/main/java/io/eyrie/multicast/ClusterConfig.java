package io.eyrie.multicast;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The static description of a cluster: its nodes (one JVM each) and its groups (one Raft group
 * each, with the nodes that hold a replica).
 *
 * <p>The text form, one declaration per line ({@code #} starts a comment):
 *
 * <pre>
 * node 1 127.0.0.1 raft=7101 client=7201
 * node 2 127.0.0.1 raft=7102 client=7202
 * node 3 127.0.0.1 raft=7103 client=7203
 * group oracle oracle 1,2,3
 * group p0 partition 1,2,3
 * </pre>
 *
 * Any layout that gives each group distinct existing nodes is valid. A node line may end with
 * {@code metrics=PORT}: the HTTP port where the node launcher serves {@code /metrics} and
 * {@code /ready}. A line {@code tls DIR} turns on mutual TLS on every node's client port with
 * the certificates {@code eyrie certs --out DIR} wrote: node N uses {@code DIR/node-N.pem} and
 * its key, and tools name their identity ({@code --as admin-ops}); a relative DIR is relative to
 * the cluster file's directory. Instances are immutable. The text form is read and written by
 * the package-private {@code ClusterText}; this class owns the nodes, groups and ports, and what makes them valid.
 */
public final class ClusterConfig {

  /** The role of a group. */
  public enum Kind {
    /** A partition of the application state. */
    PARTITION,
    /** The location oracle. */
    ORACLE
  }

  /**
   * One node: a JVM hosting one Ratis server and one client endpoint.
   *
   * @param id the node id, positive
   * @param host the host name or address both ports listen on
   * @param raftPort the Ratis (server to server) port
   * @param clientPort the client endpoint port
   */
  public record NodeInfo(int id, String host, int raftPort, int clientPort) {}

  /**
   * One group.
   *
   * @param id the group id
   * @param kind partition or oracle
   * @param members the ids of the nodes holding a replica, ascending
   */
  public record GroupInfo(GroupId id, Kind kind, List<Integer> members) {}

  private final SortedMap<Integer, NodeInfo> nodes;
  private final SortedMap<GroupId, GroupInfo> groups;
  private final SortedMap<Integer, Integer> metricsPorts;
  private final String tlsDir;

  private ClusterConfig(SortedMap<Integer, NodeInfo> nodes, SortedMap<GroupId, GroupInfo> groups,
      SortedMap<Integer, Integer> metricsPorts, String tlsDir) {
    this.nodes = Collections.unmodifiableSortedMap(nodes);
    this.groups = Collections.unmodifiableSortedMap(groups);
    this.metricsPorts = Collections.unmodifiableSortedMap(metricsPorts);
    this.tlsDir = tlsDir;
  }

  /**
   * Returns the directory of the cluster's certificates (its {@code tls DIR} line; {@link
   * #load} makes a relative one relative to the file's directory), or null if the cluster runs
   * plaintext.
   */
  public Path tlsDir() {
    return tlsDir == null ? null : Path.of(tlsDir);
  }

  /** The {@code tls} line's directory as written, or null (for the text form). */
  String tlsDirText() {
    return tlsDir;
  }

  /**
   * Returns the TLS configuration of one identity from the cluster's certificates ({@code
   * node-1}, {@code admin-ops}, {@code client-app}: the files' names), or null if the cluster runs
   * plaintext.
   *
   * @param name the identity's files' name
   * @return its configuration, or null
   * @throws IllegalArgumentException naming a file that is missing or wrong
   */
  public TlsConfig tls(String name) {
    return tlsDir == null ? null : TlsConfig.fromDir(tlsDir(), name);
  }

  /**
   * Returns the HTTP port a node serves its metrics and readiness on, or 0 if its line names none.
   *
   * @param nodeId a node id
   * @return the port, or 0
   */
  public int metricsPort(int nodeId) {
    return metricsPorts.getOrDefault(nodeId, 0);
  }

  /** Returns the nodes by id. */
  public SortedMap<Integer, NodeInfo> nodes() {
    return nodes;
  }

  /** Returns the groups by id. */
  public SortedMap<GroupId, GroupInfo> groups() {
    return groups;
  }

  /** Returns the ids of all groups, ascending. */
  public Set<GroupId> groupIds() {
    return groups.keySet();
  }

  /** Returns the partitions' ids, ascending. */
  public List<GroupId> partitions() {
    List<GroupId> out = new ArrayList<>();
    groups.values().forEach(g -> {
      if (g.kind() == Kind.PARTITION) {
        out.add(g.id());
      }
    });
    return out;
  }

  /** Returns the oracle group's id, or null if the cluster has none. */
  public GroupId oracle() {
    for (GroupInfo g : groups.values()) {
      if (g.kind() == Kind.ORACLE) {
        return g.id();
      }
    }
    return null;
  }

  /**
   * Returns a group.
   *
   * @param id the group id
   * @return the group
   * @throws IllegalArgumentException if the cluster has no such group
   */
  public GroupInfo group(GroupId id) {
    GroupInfo g = groups.get(id);
    if (g == null) {
      throw new IllegalArgumentException("unknown group " + id);
    }
    return g;
  }

  /**
   * Returns a node.
   *
   * @param id the node id
   * @return the node
   * @throws IllegalArgumentException if the cluster has no such node
   */
  public NodeInfo node(int id) {
    NodeInfo n = nodes.get(id);
    if (n == null) {
      throw new IllegalArgumentException("unknown node " + id);
    }
    return n;
  }

  /** Returns the groups that have a replica on the given node, ascending. */
  public List<GroupId> groupsOf(int nodeId) {
    List<GroupId> out = new ArrayList<>();
    for (GroupInfo g : groups.values()) {
      if (g.members().contains(nodeId)) {
        out.add(g.id());
      }
    }
    return out;
  }

  /**
   * Returns this configuration with one more group (a group added to the running cluster), or
   * this configuration if it has the group already.
   *
   * @param g the group, on nodes of this cluster
   * @return the configuration with the group
   * @throws IllegalArgumentException if the cluster has another group of that name, or the group
   *     names an unknown node
   */
  public ClusterConfig withGroup(GroupInfo g) {
    GroupInfo had = groups.get(g.id());
    if (had != null) {
      if (!had.equals(g)) {
        throw new IllegalArgumentException("group " + g.id() + " exists already as " + had);
      }
      return this;
    }
    return toBuilder().group(g.id(), g.kind(), g.members()).build();
  }

  /** Returns this configuration in its text form, which {@link #parse(String)} reads back. */
  public String toText() {
    return ClusterText.print(this);
  }

  /**
   * Reads a cluster file.
   *
   * @param file the file
   * @return the configuration
   * @throws IOException if the file cannot be read
   * @throws IllegalArgumentException if it is malformed, with the line at fault
   */
  public static ClusterConfig load(Path file) throws IOException {
    ClusterConfig c = parse(Files.readString(file, StandardCharsets.UTF_8));
    if (c.tlsDir != null && !Path.of(c.tlsDir).isAbsolute()) {
      Path base = file.toAbsolutePath().getParent();
      Builder b = c.toBuilder();
      b.tlsDir(base.resolve(c.tlsDir).normalize().toString());
      return b.build();
    }
    return c;
  }

  private Builder toBuilder() {
    Builder b = newBuilder();
    nodes.values().forEach(n -> b.node(n.id(), n.host(), n.raftPort(), n.clientPort()));
    metricsPorts.forEach(b::metricsPort);
    b.tlsDir(tlsDir);
    groups.values().forEach(x -> b.group(x.id(), x.kind(), x.members()));
    return b;
  }

  /**
   * Parses the text form.
   *
   * @param text the text
   * @return the configuration
   * @throws IllegalArgumentException if it is malformed, with the line at fault
   */
  public static ClusterConfig parse(String text) {
    return ClusterText.parse(text);
  }

  /** Returns a new builder. */
  public static Builder newBuilder() {
    return new Builder();
  }

  /** Builds a {@link ClusterConfig}; {@link #build()} validates the whole. */
  public static final class Builder {
    private final SortedMap<Integer, NodeInfo> nodes = new TreeMap<>();
    private final SortedMap<GroupId, GroupInfo> groups = new TreeMap<>();
    private final SortedMap<Integer, Integer> metricsPorts = new TreeMap<>();
    private String tlsDir;

    private Builder() {}

    /**
     * Sets the directory of the cluster's certificates ({@link ClusterConfig#tlsDir()}); null
     * for plaintext.
     *
     * @param dir the directory, as written {@code eyrie certs --out}
     * @return this builder
     */
    public Builder tlsDir(String dir) {
      this.tlsDir = dir;
      return this;
    }

    /**
     * Sets the HTTP port where a node serves {@code /metrics} and {@code /ready}.
     *
     * @param id a node id (added before or after)
     * @param port the port
     * @return this builder
     */
    public Builder metricsPort(int id, int port) {
      if (port <= 0 || port > 65535) {
        throw new IllegalArgumentException("metrics port out of range: " + port);
      }
      metricsPorts.put(id, port);
      return this;
    }

    /**
     * Adds a node.
     *
     * @param id positive node id
     * @param host host name or address
     * @param raftPort Ratis port
     * @param clientPort client endpoint port
     * @return this builder
     */
    public Builder node(int id, String host, int raftPort, int clientPort) {
      if (id <= 0) {
        throw new IllegalArgumentException("node id must be positive: " + id);
      }
      if (nodes.put(id, new NodeInfo(id, host, raftPort, clientPort)) != null) {
        throw new IllegalArgumentException("duplicate node " + id);
      }
      return this;
    }

    /**
     * Adds a group.
     *
     * @param id group id
     * @param kind partition or oracle
     * @param members node ids of its replicas
     * @return this builder
     */
    public Builder group(GroupId id, Kind kind, List<Integer> members) {
      TreeSet<Integer> sorted = new TreeSet<>(members);
      if (sorted.size() != members.size() || sorted.isEmpty()) {
        throw new IllegalArgumentException("group " + id + " needs distinct members, got " + members);
      }
      if (groups.put(id, new GroupInfo(id, kind, List.copyOf(sorted))) != null) {
        throw new IllegalArgumentException("duplicate group " + id);
      }
      return this;
    }

    /** Validates and returns the configuration. */
    public ClusterConfig build() {
      if (groups.isEmpty()) {
        throw new IllegalArgumentException("a cluster needs at least one group");
      }
      int oracles = 0;
      for (GroupInfo g : groups.values()) {
        oracles += g.kind() == Kind.ORACLE ? 1 : 0;
        for (int m : g.members()) {
          if (!nodes.containsKey(m)) {
            throw new IllegalArgumentException("group " + g.id() + " names unknown node " + m);
          }
        }
      }
      if (oracles > 1) {
        throw new IllegalArgumentException("at most one oracle group");
      }
      Set<String> endpoints = new TreeSet<>();
      for (NodeInfo n : nodes.values()) {
        if (!endpoints.add(n.host() + ":" + n.raftPort()) || !endpoints.add(n.host() + ":" + n.clientPort())) {
          throw new IllegalArgumentException("node " + n.id() + " reuses a port");
        }
      }
      for (int id : metricsPorts.keySet()) {
        if (!nodes.containsKey(id)) {
          throw new IllegalArgumentException("metrics port for unknown node " + id);
        }
      }
      return new ClusterConfig(new TreeMap<>(nodes), new TreeMap<>(groups), new TreeMap<>(metricsPorts), tlsDir);
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ClusterConfig c && c.nodes.equals(nodes) && c.groups.equals(groups)
        && c.metricsPorts.equals(metricsPorts) && java.util.Objects.equals(c.tlsDir, tlsDir);
  }

  @Override
  public int hashCode() {
    return nodes.hashCode() * 31 + groups.hashCode();
  }

  @Override
  public String toString() {
    return toText();
  }

}
