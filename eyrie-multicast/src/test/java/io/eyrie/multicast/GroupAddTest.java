package io.eyrie.multicast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.testing.Waits;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A partition group added to a running cluster (ClusterAdmin.addGroup): it takes single- and
 * multi-group messages from a client that knew it and from one that did not, while other
 * traffic goes on without a failure; its nodes record it, so it survives a node's restart with
 * its state, and it keeps serving when one of its members is down.
 */
@Timeout(180)
class GroupAddTest {
  private static final GroupId P0 = GroupId.valueOf("p0");
  private static final GroupId P1 = GroupId.valueOf("p1");
  private static final GroupId P2 = GroupId.valueOf("p2");

  /** Counts the messages it executes; replies with the count. */
  static final class Counter implements Deliverer {
    long count;

    @Override
    public Execution deliver(ExecutionContext ctx) {
      return Execution.reply(++count);
    }

    @Override
    public byte[] snapshot() {
      return ByteBuffer.allocate(8).putLong(count).array();
    }

    @Override
    public void restore(byte[] s) {
      count = s.length == 0 ? 0 : ByteBuffer.wrap(s).getLong();
    }
  }

  @Test
  void anAddedGroupServesOldAndNewClientsAndSurvivesRestarts() throws Exception {
    try (EmbeddedCluster c = EmbeddedCluster.newBuilder().nodes(3).partitions(2)
        .deliverers((g, cl, codec) -> new Counter()).start();
        MulticastClient admin = c.newClient();
        MulticastClient background = c.newClient()) {
      c.awaitLeaders(Duration.ofSeconds(60));
      // Traffic between the file's groups all along.
      AtomicBoolean stop = new AtomicBoolean();
      AtomicLong ok = new AtomicLong();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      Thread load = new Thread(() -> {
        while (!stop.get() && failure.get() == null) {
          try {
            background.multicast(Set.of(P0, P1), P0, 1L).get(30, TimeUnit.SECONDS);
            ok.incrementAndGet();
          } catch (Exception e) {
            failure.set(e);
          }
        }
      });
      load.start();

      ClusterConfig after = ClusterAdmin.addGroup(admin, P2, List.of(1, 2, 3), Duration.ofSeconds(60));
      assertEquals(List.of(1, 2, 3), after.group(P2).members());
      for (int n = 1; n <= 3; n++) {
        Node node = c.node(n);
        Waits.until(Duration.ofSeconds(30), () -> node.groups().contains(P2) && node.isOpen(P2),
            () -> "node " + node.id() + " hosts and opened p2");
      }
      assertEquals(1L, admin.multicast(Set.of(P2), P2, 1L).get(30, TimeUnit.SECONDS));
      assertEquals(2L, admin.multicast(Set.of(P0, P2), P2, 1L).get(30, TimeUnit.SECONDS));
      // A client that started before the addition learns the group when it first names it.
      try (MulticastClient fresh = MulticastClient.connect(c.cluster(), c.options().registry())) {
        assertEquals(3L, fresh.multicast(Set.of(P1, P2), P2, 1L).get(30, TimeUnit.SECONDS));
        assertTrue(fresh.cluster().groups().containsKey(P2));
      }

      // A restarted node hosts the group again from its storage, with its state.
      c.kill(2);
      c.restart(2);
      Node two = c.node(2);
      assertTrue(two.groups().contains(P2) && two.isOpen(P2), "node 2 hosts p2 after its restart");
      // With node 1 down, p2 runs on nodes 2 and 3.
      c.kill(1);
      assertEquals(4L, admin.multicast(Set.of(P2), P2, 1L).get(60, TimeUnit.SECONDS));
      Waits.until(Duration.ofSeconds(30), () -> c.node(2).inspect(P2, d -> ((Counter) d).count) == 4L,
          () -> "node 2's replica of p2 executed all 4 messages");
      c.restart(1);
      assertEquals(5L, admin.multicast(Set.of(P2, P0), P2, 1L).get(60, TimeUnit.SECONDS));

      stop.set(true);
      load.join(60_000);
      if (failure.get() != null) {
        throw new AssertionError("traffic failed during the addition", failure.get());
      }
      assertTrue(ok.get() > 10, "traffic went on: " + ok.get());
    }
  }

  private static final GroupId P3 = GroupId.valueOf("p3");

  /** The replicated counters of a replica (those a snapshot or a replay must reproduce). */
  static List<Long> replicated(Node n, GroupId g) {
    NodeStats.Group s = n.stats(g);
    return List.of(s.entries(), s.delivered(), s.deliveredMulti(), s.executed(), s.duplicates(), s.itemsSent(),
        s.itemsReceived());
  }

  /**
   * Review N1: two groups added one after the other; every node records what each starts
   * knowing (the groups added before it, and itself), and a node restarted without a snapshot
   * replays every replica, the first added group's too, to the state its peers have.
   */
  @Test
  void addedGroupsStartFromWhatTheirChangesDestinationsKnewAlsoAfterARestart() throws Exception {
    try (EmbeddedCluster c = EmbeddedCluster.newBuilder().nodes(3).partitions(2)
        .options(NodeOptions.newBuilder().snapshotOnStop(false).build())
        .deliverers((g, cl, codec) -> new Counter()).start();
        MulticastClient admin = c.newClient()) {
      c.awaitLeaders(Duration.ofSeconds(60));
      ClusterAdmin.addGroup(admin, P2, List.of(1, 2, 3), Duration.ofSeconds(60));
      assertEquals(1L, admin.multicast(Set.of(P0, P2), P2, 1L).get(30, TimeUnit.SECONDS));
      ClusterAdmin.addGroup(admin, P3, List.of(1, 2, 3), Duration.ofSeconds(60));
      assertEquals(1L, admin.multicast(Set.of(P2, P3), P3, 1L).get(30, TimeUnit.SECONDS));
      assertEquals(2L, admin.multicast(Set.of(P1, P3), P3, 1L).get(30, TimeUnit.SECONDS));
      for (int n = 1; n <= 3; n++) {
        Path f = c.storageOf(n).resolve(AddedGroups.FILE);
        int id = n;
        Waits.until(Duration.ofSeconds(30), () -> {
          try {
            return Files.readString(f).contains("open since=p2,p3");
          } catch (java.io.IOException e) {
            return false;
          }
        }, () -> "node " + id + " recorded p3 open");
        List<String> lines = Files.readAllLines(f);
        assertEquals(List.of("group p2 partition 1,2,3 open since=p2", "group p3 partition 1,2,3 open since=p2,p3"),
            lines, "node " + n);
      }

      c.kill(3);
      c.restart(3);
      assertEquals(3L, admin.multicast(Set.of(P0, P2, P3), P3, 1L).get(60, TimeUnit.SECONDS));
      Node one = c.node(1);
      Node three = c.node(3);
      for (GroupId g : List.of(P0, P1, P2, P3)) {
        Waits.until(Duration.ofSeconds(60), () -> replicated(one, g).equals(replicated(three, g)),
            () -> g + ": node 3 replays to node 1's counters: " + replicated(three, g) + " vs " + replicated(one, g));
        assertEquals(0, three.stats(g).snapshotsLoaded(), g + " replayed from its log");
      }
    }
  }
}
