package io.eyrie.multicast;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A node's record of the groups added to the running cluster, in its storage directory: at a
 * restart Ratis finds those groups' logs there and asks for their state machines before any
 * replica has replayed the group change that announced them. One line per group, in the cluster
 * file's form with {@code open} or {@code known} at the end.
 */
final class AddedGroups {
  static final String FILE = "eyrie-groups.conf";

  private AddedGroups() {}

  /** Returns {@code cluster} with the groups recorded in {@code storage}; adds the open ones to {@code open}. */
  static ClusterConfig load(Path storage, ClusterConfig cluster, Set<GroupId> open) throws IOException {
    Path f = storage.resolve(FILE);
    if (!Files.exists(f)) {
      return cluster;
    }
    ClusterConfig out = cluster;
    List<String> lines = Files.readAllLines(f, StandardCharsets.UTF_8);
    for (int i = 0; i < lines.size(); i++) {
      String[] w = lines.get(i).trim().split("\\s+");
      if (w.length != 5 || !w[0].equals("group")) {
        if (!lines.get(i).isBlank()) {
          throw new IOException(f + " line " + (i + 1) + ": expected 'group NAME KIND N,N,N open|known'");
        }
        continue;
      }
      List<Integer> members = new ArrayList<>();
      for (String m : w[3].split(",")) {
        members.add(Integer.parseInt(m));
      }
      GroupId g = GroupId.valueOf(w[1]);
      try {
        out = out.withGroup(new ClusterConfig.GroupInfo(g, ClusterConfig.Kind.valueOf(w[2].toUpperCase()),
            List.copyOf(new java.util.TreeSet<>(members))));
      } catch (IllegalArgumentException e) {
        throw new IOException(f + " line " + (i + 1) + ": " + e.getMessage(), e);
      }
      if (w[4].equals("open")) {
        open.add(g);
      }
    }
    return out;
  }

  /** Records the groups of {@code cluster} that are not in the cluster file (atomically). */
  static void save(Path storage, ClusterConfig cluster, Set<GroupId> fileGroups, Set<GroupId> open) throws IOException {
    StringBuilder b = new StringBuilder();
    for (ClusterConfig.GroupInfo g : cluster.groups().values()) {
      if (fileGroups.contains(g.id())) {
        continue;
      }
      b.append("group ").append(g.id()).append(' ').append(g.kind().name().toLowerCase()).append(' ');
      for (int i = 0; i < g.members().size(); i++) {
        b.append(i == 0 ? "" : ",").append(g.members().get(i));
      }
      b.append(open.contains(g.id()) ? " open" : " known").append('\n');
    }
    Path tmp = storage.resolve(FILE + ".tmp");
    Files.writeString(tmp, b.toString(), StandardCharsets.UTF_8);
    Files.move(tmp, storage.resolve(FILE), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }
}
