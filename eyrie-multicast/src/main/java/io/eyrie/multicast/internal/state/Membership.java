package io.eyrie.multicast.internal.state;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.ClusterConfig.GroupInfo;
import io.eyrie.multicast.ClusterConfig.Kind;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.internal.Wire;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The groups one group knows of, as a function of its log: those of the cluster file it started
 * with, and those added since by group changes ({@link Wire.GroupChange}) it delivered. A group
 * added to a running cluster is first <em>known</em> (every group can validate, order and
 * channel messages naming it, and the nodes create its replicas) and then <em>open</em> (nodes
 * accept client messages naming it). An operator opens a group only once every group knows it,
 * so no group ever refuses a message naming a group that another destination accepted.
 *
 * <p>Part of the replicated state, with its own snapshot section.
 */
final class Membership {
  private final TreeMap<GroupId, GroupInfo> known = new TreeMap<>();
  private final TreeSet<GroupId> open = new TreeSet<>();

  /**
   * Starts with known groups of which some are open: a cluster file's groups are all open; a
   * group created in a running cluster starts knowing the groups added before it (and itself) as
   * known only, and learns which are open from the group change that opens it (its destinations
   * are the open groups, {@link #markOpen}); it is a destination of every later group change. The
   * initial groups are the same at every replica of the group: the cluster file's for its groups,
   * and for an added group those recorded at its addition, never what a node learned since
   * (review N1).
   */
  Membership(Collection<GroupInfo> initial, Set<GroupId> initiallyOpen) {
    for (GroupInfo g : initial) {
      known.put(g.id(), g);
      if (initiallyOpen.contains(g.id())) {
        open.add(g.id());
      }
    }
  }

  /** The groups of a test that names groups only: all partitions, with no members. */
  static List<GroupInfo> partitionsNamed(Collection<GroupId> names) {
    List<GroupInfo> out = new ArrayList<>();
    for (GroupId g : names) {
      out.add(new GroupInfo(g, Kind.PARTITION, List.of()));
    }
    return out;
  }

  boolean knows(GroupId g) {
    return known.containsKey(g);
  }

  /** Known groups, by id. */
  SortedMap<GroupId, GroupInfo> known() {
    return Collections.unmodifiableSortedMap(known);
  }

  /** Open groups. */
  Set<GroupId> open() {
    return Collections.unmodifiableSet(open);
  }

  /** The known partitions, ascending. */
  List<GroupId> partitions() {
    List<GroupId> out = new ArrayList<>();
    for (GroupInfo g : known.values()) {
      if (g.kind() == Kind.PARTITION) {
        out.add(g.id());
      }
    }
    return Collections.unmodifiableList(out);
  }

  /** Marks a known group open (a destination of a delivered group change); an unknown one is ignored. */
  void markOpen(GroupId g) {
    if (known.containsKey(g)) {
      open.add(g);
    }
  }

  /** The known partitions that are open, ascending. */
  List<GroupId> openPartitions() {
    List<GroupId> out = new ArrayList<>();
    for (GroupInfo g : known.values()) {
      if (g.kind() == Kind.PARTITION && open.contains(g.id())) {
        out.add(g.id());
      }
    }
    return Collections.unmodifiableList(out);
  }

  /**
   * Applies a group change, or says why it cannot be: a group's kind and members never change
   * once known, and a change must name its group, kind and members. Deterministic.
   *
   * @return null if applied (or already in effect), else the reason it was refused
   */
  String apply(Wire.GroupChange c) {
    String invalid = validate(c);
    if (invalid != null) {
      return invalid;
    }
    GroupInfo g = info(c);
    GroupInfo had = known.get(g.id());
    if (had != null && !(had.kind() == g.kind() && (had.members().isEmpty() || had.members().equals(g.members())))) {
      return "group " + g.id() + " is already known as " + had.kind().name().toLowerCase() + " on nodes "
          + had.members() + "; a group's kind and members do not change";
    }
    if (had == null || had.members().isEmpty()) {
      known.put(g.id(), g);
    }
    if (c.open()) {
      open.add(g.id());
    }
    return null;
  }

  static String validate(Wire.GroupChange c) {
    if (c.group() == null || c.kind() == null || c.members() == null || c.members().length == 0) {
      return "a group change names its group, kind and members";
    }
    if (!c.kind().equals("partition")) {
      return "only partitions can be added to a running cluster, not " + c.kind();
    }
    TreeSet<Integer> distinct = new TreeSet<>();
    for (int m : c.members()) {
      if (m <= 0 || !distinct.add(m)) {
        return "members must be distinct positive node ids: " + java.util.Arrays.toString(c.members());
      }
    }
    return null;
  }

  static GroupInfo info(Wire.GroupChange c) {
    TreeSet<Integer> members = new TreeSet<>();
    for (int m : c.members()) {
      members.add(m);
    }
    return new GroupInfo(c.group(), Kind.valueOf(c.kind().toUpperCase()), List.copyOf(members));
  }

  /** Writes every known group with its kind, members and whether it is open. */
  void writeTo(Output out) {
    out.writeVarInt(known.size(), true);
    for (GroupInfo g : known.values()) {
      out.writeString(g.id().name());
      out.writeString(g.kind().name());
      out.writeVarInt(g.members().size(), true);
      for (int m : g.members()) {
        out.writeVarInt(m, true);
      }
      out.writeBoolean(open.contains(g.id()));
    }
  }

  void readFrom(Input in) {
    known.clear();
    open.clear();
    int n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      GroupId id = GroupId.valueOf(in.readString());
      Kind kind = Kind.valueOf(in.readString());
      int k = in.readVarInt(true);
      List<Integer> members = new ArrayList<>(k);
      for (int j = 0; j < k; j++) {
        members.add(in.readVarInt(true));
      }
      known.put(id, new GroupInfo(id, kind, List.copyOf(members)));
      if (in.readBoolean()) {
        open.add(id);
      }
    }
  }

}
