package io.eyrie.multicast.internal.state;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.esotericsoftware.kryo.io.Input;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.internal.Wire;
import io.eyrie.multicast.internal.Wire.Start;
import java.util.List;
import java.util.Set;
import java.util.SortedMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A group added to the running cluster becomes known to a group exactly where that group
 * delivers the group change: before it, a message naming the new group is refused; after it,
 * the message is ordered and its proposal goes out on a new channel. The knowledge is part of the
 * replicated state (snapshots carry it), and the application never sees the change.
 */
@Timeout(30)
class GroupStateMembershipTest {
  private static final GroupId A = GroupId.valueOf("a");
  private static final GroupId B = GroupId.valueOf("b");
  private static final GroupId NEW = GroupId.valueOf("p9");

  private final RulesSupport t = new RulesSupport();

  private GroupState group(GroupId self, RulesSupport.ParkingApp app) {
    List<ClusterConfig.GroupInfo> file = List.of(
        new ClusterConfig.GroupInfo(A, ClusterConfig.Kind.PARTITION, List.of(1, 2, 3)),
        new ClusterConfig.GroupInfo(B, ClusterConfig.Kind.ORACLE, List.of(1, 2, 3)));
    GroupState s = new GroupState(self, file, Set.of(A, B), app, t.codec, SimGroups.NO_EXPIRY);
    t.listen(s);
    return s;
  }

  private Start change(long seq, boolean open) {
    return new Start(MsgId.valueOf(RulesSupport.CLIENT, seq, 0), new GroupId[] {A}, A,
        t.codec.encode(new Wire.GroupChange(NEW, "partition", new int[] {3, 1, 2}, open)), 0);
  }

  @Test
  void aGroupIsKnownFromTheDeliveryOfItsChangeAndSnapshotsCarryIt() {
    RulesSupport.ParkingApp app = new RulesSupport.ParkingApp();
    GroupState a = group(A, app);
    assertEquals(List.of(A), a.members.partitions());

    Start early = t.start(1, 0, A, A, NEW);
    t.submit(a, early);
    assertEquals(Status.BAD_REQUEST, t.repliesFor(early.id()).get(0).reply().status(),
        "a message naming a group not known yet is refused");
    assertNull(a.channelPositions(NEW));

    Start known = change(2, false);
    t.submit(a, known);
    assertEquals(Status.OK, t.repliesFor(known.id()).get(0).reply().status());
    assertTrue(app.log.isEmpty(), "the application does not see group changes: " + app.log);
    SortedMap<GroupId, ClusterConfig.GroupInfo> groups = a.knownGroups();
    assertEquals(List.of(1, 2, 3), groups.get(NEW).members());
    assertFalse(a.openGroups().contains(NEW));
    assertEquals(List.of(A, NEW), a.members.partitions(), "partitions as the executing group knows them");

    Start open = change(3, true);
    t.submit(a, open);
    assertTrue(a.openGroups().contains(NEW));

    Start later = t.start(4, 0, A, A, NEW);
    t.submit(a, later);
    assertTrue(t.repliesFor(later.id()).isEmpty(), "ordered, waiting for the new group's proposal: " + t.repliesFor(later.id()));
    long[] pos = a.channelPositions(NEW);
    assertNotNull(pos);
    assertArrayEquals(new long[] {0, 0, 0}, pos, "a channel to the new group is open (nothing on it yet)");
    assertEquals(later.id(), a.component(later.id()).id(), "its component is ready for the new group's pulls");


    // A replica that restores the snapshot into a state built from the cluster file alone.
    GroupState restored = group(A, new RulesSupport.ParkingApp());
    GroupStateSnapshot.read(restored, new Input(t.snapshot(a)));
    assertEquals(a.knownGroups(), restored.knownGroups());
    assertEquals(a.openGroups(), restored.openGroups());
    assertArrayEquals(a.channelPositions(NEW), restored.channelPositions(NEW));
    assertArrayEquals(t.snapshot(a), t.snapshot(restored), "equal states give equal bytes");
  }

  /**
   * A group created in the running cluster starts knowing the groups added before it as known
   * only; the change that opens it names the open groups as its destinations, and it marks them
   * open at that point of its log (review N3: else an open group would count as halfway there).
   */
  @Test
  void aNewGroupLearnsWhichGroupsAreOpenFromTheChangeThatOpensIt() {
    GroupId earlier = GroupId.valueOf("p8");
    List<ClusterConfig.GroupInfo> known = List.of(
        new ClusterConfig.GroupInfo(A, ClusterConfig.Kind.PARTITION, List.of(1, 2, 3)),
        new ClusterConfig.GroupInfo(B, ClusterConfig.Kind.ORACLE, List.of(1, 2, 3)),
        new ClusterConfig.GroupInfo(earlier, ClusterConfig.Kind.PARTITION, List.of(1, 2, 3)),
        new ClusterConfig.GroupInfo(NEW, ClusterConfig.Kind.PARTITION, List.of(1, 2, 3)));
    GroupState n = new GroupState(NEW, known, Set.of(A, B), new RulesSupport.ParkingApp(), t.codec,
        SimGroups.NO_EXPIRY);
    t.listen(n);
    assertEquals(List.of(A, earlier, NEW), n.members.partitions());
    assertEquals(List.of(A), n.members.openPartitions());
    // The opening change goes to the open groups and the new one; only the new group's proposal
    // is needed here once the others' arrive, so deliver it with every other destination's.
    Start open = new Start(MsgId.valueOf(RulesSupport.CLIENT, 1, 0), new GroupId[] {A, NEW}, A,
        t.codec.encode(new Wire.GroupChange(NEW, "partition", new int[] {1, 2, 3}, true)), 0);
    Start withEarlier = new Start(MsgId.valueOf(RulesSupport.CLIENT, 2, 0), new GroupId[] {A, earlier, NEW}, A,
        t.codec.encode(new Wire.GroupChange(NEW, "partition", new int[] {1, 2, 3}, true)), 0);
    t.submit(n, open);
    t.decide(n, open, 1);
    assertEquals(Set.of(A, B, NEW), n.openGroups(), "the destinations and the group itself are open");
    t.submit(n, withEarlier);
    t.decide(n, withEarlier, 5);
    assertEquals(Set.of(A, B, earlier, NEW), n.openGroups());
    assertEquals(List.of(A, earlier, NEW), n.members.openPartitions());
  }

  @Test
  void aSnapshotRestoresItsOwnChannelsNotThoseTheFreshStateOpened() {
    GroupState a = group(A, new RulesSupport.ParkingApp());
    // A fresh state that starts knowing more than the snapshot (review N1: a replica built from
    // what its node learned): the snapshot's channels replace the fresh state's.
    List<ClusterConfig.GroupInfo> more = List.of(
        new ClusterConfig.GroupInfo(A, ClusterConfig.Kind.PARTITION, List.of(1, 2, 3)),
        new ClusterConfig.GroupInfo(B, ClusterConfig.Kind.ORACLE, List.of(1, 2, 3)),
        new ClusterConfig.GroupInfo(NEW, ClusterConfig.Kind.PARTITION, List.of(1, 2, 3)));
    GroupState restored = new GroupState(A, more, Set.of(A, B), new RulesSupport.ParkingApp(), t.codec,
        SimGroups.NO_EXPIRY);
    assertTrue(restored.peers().contains(NEW));
    GroupStateSnapshot.read(restored, new Input(t.snapshot(a)));
    assertEquals(a.knownGroups(), restored.knownGroups());
    assertEquals(a.peers(), restored.peers(), "no channel to a group the snapshot does not know");
    assertNull(restored.channelPositions(NEW));
    assertArrayEquals(t.snapshot(a), t.snapshot(restored), "equal states give equal bytes");
  }

  @Test
  void theListenerIsToldWhatTheGroupKnewRightAfterDeliveringAChange() {
    GroupState a = group(A, new RulesSupport.ParkingApp());
    List<Object[]> told = new java.util.ArrayList<>();
    StateListener inner = new StateListener() {
      @Override
      public void reply(MsgId id, StoredReply reply) {}

      @Override
      public void outboxChanged(GroupId to) {}

      @Override
      public void groupKnown(ClusterConfig.GroupInfo added, Set<GroupId> knownThen) {
        told.add(new Object[] {added, knownThen});
      }
    };
    a.setListener(inner);
    t.submit(a, change(1, false));
    t.submit(a, change(2, true)); // known already: not told again
    assertEquals(1, told.size());
    assertEquals(new ClusterConfig.GroupInfo(NEW, ClusterConfig.Kind.PARTITION, List.of(1, 2, 3)), told.get(0)[0]);
    assertEquals(Set.of(A, B, NEW), told.get(0)[1]);
  }

  @Test
  void aChangeThatWouldAlterAKnownGroupIsRefused() {
    GroupState a = group(A, new RulesSupport.ParkingApp());
    t.submit(a, change(1, false));
    Start other = new Start(MsgId.valueOf(RulesSupport.CLIENT, 2, 0), new GroupId[] {A}, A,
        t.codec.encode(new Wire.GroupChange(NEW, "partition", new int[] {1, 2}, false)), 0);
    t.submit(a, other);
    assertEquals(Status.ERROR, t.repliesFor(other.id()).get(0).reply().status());
    assertEquals(List.of(1, 2, 3), a.knownGroups().get(NEW).members());
    Start oracle = new Start(MsgId.valueOf(RulesSupport.CLIENT, 3, 0), new GroupId[] {A}, A,
        t.codec.encode(new Wire.GroupChange(GroupId.valueOf("o2"), "oracle", new int[] {1}, false)), 0);
    t.submit(a, oracle);
    assertEquals(Status.ERROR, t.repliesFor(oracle.id()).get(0).reply().status());
    assertFalse(a.knownGroups().containsKey(GroupId.valueOf("o2")));
  }
}
