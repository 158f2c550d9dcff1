package io.eyrie.multicast;

import java.util.ArrayList;
import java.util.List;

/**
 * The text form of a {@link ClusterConfig} (one declaration per line, see there): parsing it,
 * with the line at fault in every error, and printing a configuration so that parsing gives it
 * back.
 */
final class ClusterText {
  private ClusterText() {}

  /** The text form of a configuration. */
  static String print(ClusterConfig c) {
    StringBuilder sb = new StringBuilder();
    if (c.tlsDirText() != null) {
      sb.append("tls ").append(c.tlsDirText()).append('\n');
    }
    for (ClusterConfig.NodeInfo n : c.nodes().values()) {
      sb.append("node ").append(n.id()).append(' ').append(n.host())
          .append(" raft=").append(n.raftPort()).append(" client=").append(n.clientPort());
      if (c.metricsPort(n.id()) != 0) {
        sb.append(" metrics=").append(c.metricsPort(n.id()));
      }
      sb.append('\n');
    }
    for (ClusterConfig.GroupInfo g : c.groups().values()) {
      sb.append("group ").append(g.id()).append(' ').append(g.kind().name().toLowerCase())
          .append(' ');
      for (int i = 0; i < g.members().size(); i++) {
        sb.append(i == 0 ? "" : ",").append(g.members().get(i));
      }
      sb.append('\n');
    }
    return sb.toString();
  }

  /**
   * Parses the text form.
   *
   * @throws IllegalArgumentException if it is malformed, with the line at fault
   */
  static ClusterConfig parse(String text) {
    ClusterConfig.Builder b = ClusterConfig.newBuilder();
    String tlsDir = null;
    String[] lines = text.split("\n");
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i].replaceAll("#.*", "").trim();
      if (line.isEmpty()) {
        continue;
      }
      String[] f = line.split("\\s+");
      try {
        if (f[0].equals("node") && (f.length == 5 || f.length == 6)) {
          b.node(Integer.parseInt(f[1]), f[2], port(f[3], "raft"), port(f[4], "client"));
          if (f.length == 6) {
            b.metricsPort(Integer.parseInt(f[1]), port(f[5], "metrics"));
          }
        } else if (f[0].equals("tls") && f.length == 2) {
          if (tlsDir != null) {
            throw new IllegalArgumentException("a second tls line (the first names " + tlsDir + ")");
          }
          tlsDir = f[1];
          b.tlsDir(tlsDir);
        } else if (f[0].equals("group") && f.length == 4) {
          ClusterConfig.Kind kind = ClusterConfig.Kind.valueOf(f[2].toUpperCase());
          List<Integer> members = new ArrayList<>();
          for (String m : f[3].split(",")) {
            members.add(Integer.parseInt(m.trim()));
          }
          b.group(GroupId.valueOf(f[1]), kind, members);
        } else {
          throw new IllegalArgumentException("expected 'node ID HOST raft=P client=P [metrics=P]', 'group NAME partition|oracle N,N,N' or 'tls DIR'");
        }
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("cluster file line " + (i + 1) + ": '" + lines[i].trim() + "': " + e.getMessage(), e);
      }
    }
    return b.build();
  }

  private static int port(String field, String name) {
    if (!field.startsWith(name + "=")) {
      throw new IllegalArgumentException("expected " + name + "=PORT, got " + field);
    }
    return Integer.parseInt(field.substring(name.length() + 1));
  }
}
