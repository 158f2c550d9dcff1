package io.eyrie.multicast;

import static io.eyrie.multicast.testing.TestGroups.ORACLE;
import static io.eyrie.multicast.testing.TestGroups.P0;
import static io.eyrie.multicast.testing.TestGroups.P1;
import static io.eyrie.multicast.testing.TestGroups.P2;
import static io.eyrie.multicast.testing.TestGroups.P3;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review N1: what a replica starts from is a function of its group, the same at each of its
 * replicas, not of what its node learned before it (re)started: a cluster file's group starts
 * from the cluster file, an added group from the groups recorded as known when it was added.
 */
@Timeout(30)
class InitialClusterTest {
  static final ClusterConfig FILE = ClusterConfig.parse("""
      node 1 127.0.0.1 raft=1 client=2
      node 2 127.0.0.1 raft=3 client=4
      group oracle oracle 1,2
      group p0 partition 1,2
      group p1 partition 1,2
      """);

  static ClusterConfig learned() {
    return FILE.withGroup(new ClusterConfig.GroupInfo(P2, ClusterConfig.Kind.PARTITION, List.of(1, 2)))
        .withGroup(new ClusterConfig.GroupInfo(P3, ClusterConfig.Kind.PARTITION, List.of(2)));
  }

  @Test
  void aClusterFileGroupStartsFromTheClusterFileWhateverItsNodeLearned() {
    ClusterConfig learned = learned();
    assertSame(FILE, GroupHost.initialCluster(FILE, ORACLE, learned, null));
    assertSame(FILE, GroupHost.initialCluster(FILE, P1, learned, Set.of(P2, P3)));
    assertEquals(List.of(P0, P1), GroupHost.initialCluster(FILE, ORACLE, learned, null).partitions());
  }

  @Test
  void anAddedGroupStartsFromTheGroupsKnownWhenItWasAdded() {
    ClusterConfig learned = learned();
    // p2 was added first: it starts knowing the file's groups and itself, not p3 added later.
    ClusterConfig p2 = GroupHost.initialCluster(FILE, P2, learned, Set.of(P2));
    assertEquals(Set.of(ORACLE, P0, P1, P2), p2.groups().keySet());
    ClusterConfig p3 = GroupHost.initialCluster(FILE, P3, learned, Set.of(P2, P3));
    assertEquals(Set.of(ORACLE, P0, P1, P2, P3), p3.groups().keySet());
    assertEquals(List.of(2), p3.group(P3).members());
    // Without a record (an older version's file): everything the node knows, as before.
    assertSame(learned, GroupHost.initialCluster(FILE, P2, learned, null));
  }

  @Test
  void theAddedGroupsFileRecordsWhatEachAddedGroupStartsKnowing(@TempDir Path dir) throws Exception {
    ClusterConfig learned = learned();
    Map<GroupId, Set<GroupId>> since = Map.of(P2, Set.of(P2), P3, Set.of(P2, P3));
    AddedGroups.save(dir, learned, FILE.groups().keySet(), Set.of(P2), since);
    Set<GroupId> open = new HashSet<>();
    Map<GroupId, Set<GroupId>> read = new HashMap<>();
    ClusterConfig back = AddedGroups.load(dir, FILE, open, read);
    assertEquals(learned.groups(), back.groups());
    assertEquals(Set.of(P2), open);
    assertEquals(since, read);
    // A line of an older version, without since=: loads, with nothing recorded for the group.
    Files.writeString(dir.resolve(AddedGroups.FILE), "group p2 partition 1,2 open\n", StandardCharsets.UTF_8);
    Map<GroupId, Set<GroupId>> none = new HashMap<>();
    assertTrue(AddedGroups.load(dir, FILE, new HashSet<>(), none).groups().containsKey(P2));
    assertFalse(none.containsKey(P2));
  }
}
