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
 * file's form with {@code open} or {@code known}, then {@code since=G,G,...}: the added groups
 * the group's replicas start knowing besides the cluster file's (itself and those added before
 * it), which its replica here needs again to replay its log from the start (review N1). A line
 * without it (written by an older version) leaves that unknown.
 */
final class AddedGroups {
  static final String FILE = "eyrie-groups.conf";

  private AddedGroups() {}

  /**
   * Returns {@code cluster} with the groups recorded in {@code storage}; adds the open ones to
   * {@code open}, and puts in {@code initialKnown} what each recorded group's replicas start
   * knowing (the added groups only), where recorded.
   */
  static ClusterConfig load(Path storage, ClusterConfig cluster, Set<GroupId> open,
      java.util.Map<GroupId, Set<GroupId>> initialKnown) throws IOException {
    Path f = storage.resolve(FILE);
    if (!Files.exists(f)) {
      return cluster;
    }
    ClusterConfig out = cluster;
    List<String> lines = Files.readAllLines(f, StandardCharsets.UTF_8);
    for (int i = 0; i < lines.size(); i++) {
      String[] w = lines.get(i).trim().split("\\s+");
      if (w.length < 5 || w.length > 6 || !w[0].equals("group") || (w.length == 6 && !w[5].startsWith(SINCE))) {
        if (!lines.get(i).isBlank()) {
          throw new IOException(f + " line " + (i + 1) + ": expected 'group NAME KIND N,N,N open|known [since=G,G]'");
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
      if (w.length == 6) {
        java.util.TreeSet<GroupId> since = new java.util.TreeSet<>();
        for (String x : w[5].substring(SINCE.length()).split(",")) {
          if (!x.isEmpty()) {
            since.add(GroupId.valueOf(x));
          }
        }
        initialKnown.put(g, Set.copyOf(since));
      }
    }
    return out;
  }

  private static final String SINCE = "since=";

  /** Records the groups of {@code cluster} that are not in the cluster file (atomically). */
  static void save(Path storage, ClusterConfig cluster, Set<GroupId> fileGroups, Set<GroupId> open,
      java.util.Map<GroupId, Set<GroupId>> initialKnown) throws IOException {
    StringBuilder b = new StringBuilder();
    for (ClusterConfig.GroupInfo g : cluster.groups().values()) {
      if (fileGroups.contains(g.id())) {
        continue;
      }
      b.append("group ").append(g.id()).append(' ').append(g.kind().name().toLowerCase()).append(' ');
      for (int i = 0; i < g.members().size(); i++) {
        b.append(i == 0 ? "" : ",").append(g.members().get(i));
      }
      b.append(open.contains(g.id()) ? " open" : " known");
      Set<GroupId> since = initialKnown.get(g.id());
      if (since != null) {
        b.append(' ').append(SINCE);
        int k = 0;
        for (GroupId x : new java.util.TreeSet<>(since)) {
          b.append(k++ == 0 ? "" : ",").append(x);
        }
      }
      b.append('\n');
    }
    Path tmp = storage.resolve(FILE + ".tmp");
    Files.writeString(tmp, b.toString(), StandardCharsets.UTF_8);
    Files.move(tmp, storage.resolve(FILE), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }
}
