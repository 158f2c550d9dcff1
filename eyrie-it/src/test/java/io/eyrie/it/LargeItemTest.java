package io.eyrie.it;

import static io.eyrie.it.DssmrSim.ORACLE;
import static io.eyrie.it.DssmrSim.p;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.AuditReport;
import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.PRObject;
import io.eyrie.core.Service;
import io.eyrie.core.StateMachine;
import io.eyrie.core.protocol.AccessReq;
import io.eyrie.core.protocol.CoreReply;
import io.eyrie.core.protocol.CreateReq;
import io.eyrie.core.protocol.MoveReq;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.it.DssmrSim.Msg;
import io.eyrie.oracle.OracleStateMachine;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Channel items are bounded ({@link ExecutionContext#MAX_ITEM_BYTES}, below what Ratis sends in
 * one request; review N6): a move whose values are larger together is refused with an error the
 * client sees, the objects stay where they are (and the oracle's map with them), and the channel
 * goes on; one object may not grow past what an item carries (it could never move); values just
 * below the bound pass through a real cluster.
 */
@Timeout(180)
class LargeItemTest {
  /** An object with a payload of any size. */
  static final class Blob extends PRObject {
    byte[] payload = new byte[0];

    private Blob() {}

    Blob(ObjId id) {
      super(id);
    }
  }

  /** Sets the payload of every object of the command to this many bytes; replies the total. */
  record Grow(int bytes) {}

  /** Replies the total payload of the command's objects. */
  record Size() {}

  static final class BlobServer extends StateMachine {
    @Override
    protected Object executeCommand(Command c) {
      long total = 0;
      for (ObjId id : c.objects()) {
        Blob b = (Blob) getObject(id);
        if (c.op() instanceof Grow g && id.equals(c.target())) {
          b.payload = new byte[g.bytes()];
        }
        total += b.payload.length;
      }
      return total;
    }

    @Override
    protected PRObject createObject(Command c) {
      return new Blob(c.target());
    }
  }

  static final Service SERVICE = Service.newBuilder().type(100, Blob.class).type(101, Grow.class)
      .type(102, Size.class).type(103, byte[].class).server(BlobServer::new).oracle(OracleStateMachine::new).build();

  static final ObjId A = ObjId.valueOf(1);
  static final ObjId B = ObjId.valueOf(2);
  static final int TOO_LARGE = ExecutionContext.MAX_ITEM_BYTES + 1024;
  static final int JUST_BELOW = ExecutionContext.MAX_ITEM_BYTES - 64 * 1024;
  static final int TWO_THIRDS = ExecutionContext.MAX_ITEM_BYTES / 3 * 2;

  @Test
  void aMoveOfValuesLargerThanAChannelTakesIsRefusedAndTheChannelGoesOn() {
    DssmrSim sim = new DssmrSim(2, SERVICE);
    for (ObjId id : new ObjId[] {A, B}) {
      Msg c = sim.submitAll(sim.msg(new CreateReq(Command.create(id, null), p(0)), p(0), ORACLE, p(0)));
      sim.settle();
      assertEquals(CoreReply.Status.OK, sim.replies.get(c.id()).status());
    }
    for (ObjId id : new ObjId[] {A, B}) {
      Msg g = sim.submitAll(sim.msg(new AccessReq(Command.access(new Grow(TWO_THIRDS), id)), p(0), p(0)));
      sim.settle();
      assertEquals((long) TWO_THIRDS, sim.replies.get(g.id()).value());
    }
    Msg big = sim.submitAll(sim.msg(new AccessReq(Command.access(new Grow(TOO_LARGE), A)), p(0), p(0)));
    sim.settle();
    assertTrue(sim.errors.containsKey(big.id()) && sim.errors.get(big.id()).contains("an object may take"),
        "one object may not outgrow a channel item: " + sim.errors.get(big.id()));
    Msg m = sim.submitAll(sim.msg(new MoveReq(new ObjId[] {A, B}, p(0), p(1)), p(1), ORACLE, p(0), p(1)));
    sim.settle();
    assertTrue(sim.errors.containsKey(m.id()), "refused: " + sim.replies.get(m.id()));
    assertTrue(sim.errors.get(m.id()).contains("larger than a channel takes"), sim.errors.get(m.id()));
    assertEquals(java.util.List.of(A.value(), B.value()), sim.held(p(0)), "both stay at the source");
    assertEquals(p(0), sim.map().get(A), "and the map says so");
    assertEquals(p(0), sim.map().get(B));
    Msg small = sim.submitAll(sim.msg(new MoveReq(new ObjId[] {B}, p(0), p(1)), p(1), ORACLE, p(0), p(1)));
    sim.settle();
    assertEquals(CoreReply.Status.OK, sim.replies.get(small.id()).status(), "the channel goes on: " + sim.errors.get(small.id()));
    assertEquals(p(1), sim.map().get(B));
    sim.groups.forEach((gr, s) -> assertEquals(0, s.queuedCount(), gr + " is not parked"));
  }

  /** Three nodes, an oracle and two partitions hosting {@link #SERVICE}, with short election timeouts. */
  private static EmbeddedCluster startCluster() {
    return EmbeddedCluster.newBuilder().nodes(3).partitions(2).oracle(true)
        .options(NodeOptions.newBuilder().electionTimeoutMs(600, 1200).build()).app(SERVICE).start();
  }

  /** A DS-SMR client of the cluster that falls back to S-SMR after {@code retryThreshold} retries. */
  private static Client client(EmbeddedCluster cluster, int retryThreshold) {
    return Client.newBuilder().cluster(cluster.cluster()).service(SERVICE).mode(Client.Mode.DSSMR)
        .retryThreshold(retryThreshold).build();
  }

  @Test
  void valuesJustBelowTheBoundPassThroughARealClusterAndLargerOnesAreAnError() throws Exception {
    try (EmbeddedCluster cluster = startCluster();
        Client ssmr = client(cluster, 0)) {
      // S-SMR from the start: each create goes to every partition, and each access exchanges the
      // values of the partitions' objects over the channels.
      assertTrue(ssmr.sendCreate(Command.create(A, null)).get(30, TimeUnit.SECONDS).isOk());
      assertTrue(ssmr.sendCreate(Command.create(B, null)).get(30, TimeUnit.SECONDS).isOk());
      AuditReport before = DssmrFixture.assertAuditClean(ssmr, 30);
      // With S-SMR on both objects, whichever partition holds A ships it to the other.
      long total = (Long) ssmr.sendAccess(Command.access(new Grow(JUST_BELOW), A, B)).get(60, TimeUnit.SECONDS).value();
      assertEquals(JUST_BELOW, total);
      boolean apart = before.perPartition().values().stream().allMatch(n -> n == 1);
      if (apart) {
        assertEquals((long) JUST_BELOW, ssmr.sendAccess(Command.access(new Size(), A, B)).get(60, TimeUnit.SECONDS).value(),
            "a value of " + JUST_BELOW + " bytes crossed a channel");
        ExecutionException e = assertThrows(ExecutionException.class,
            () -> ssmr.sendAccess(Command.access(new Grow(TOO_LARGE), A, B)).get(60, TimeUnit.SECONDS));
        assertTrue(String.valueOf(e.getCause()).contains("an object may take"), String.valueOf(e.getCause()));
        assertEquals((long) JUST_BELOW, ssmr.sendAccess(Command.access(new Size(), A, B)).get(60, TimeUnit.SECONDS).value(),
            "and the command that tried changed nothing");
        // (An S-SMR command ships A's value before it runs, so only a command at A's partition alone shrinks it.)
        try (Client local = client(cluster, 3)) {
          assertEquals(0L, local.sendAccess(Command.access(new Grow(0), A)).get(60, TimeUnit.SECONDS).value());
        }
        assertEquals(0L, ssmr.sendAccess(Command.access(new Size(), A, B)).get(60, TimeUnit.SECONDS).value(),
            "the channels go on");
      }
      assertTrue(apart, "the two objects were placed in different partitions: " + before);
      assertTrue(ssmr.audit().get(30, TimeUnit.SECONDS).clean());
    }
  }

  /** A drain whose objects are too large to move together moves them in pieces, and completes. */
  @Test
  void aDrainOfLargeObjectsMovesThemInPiecesAndCompletes() throws Exception {
    try (EmbeddedCluster cluster = startCluster();
        Client c = client(cluster, 3)) {
      ObjId[] ids = {ObjId.valueOf(10), ObjId.valueOf(11), ObjId.valueOf(12)};
      for (ObjId id : ids) {
        assertTrue(c.sendCreate(Command.create(id, null)).get(30, TimeUnit.SECONDS).isOk());
      }
      // Gathered in one partition by a command on all three, then each grown to two thirds of an item.
      c.sendAccess(Command.access(new Size(), ids)).get(60, TimeUnit.SECONDS);
      for (ObjId id : ids) {
        assertEquals((long) TWO_THIRDS, c.sendAccess(Command.access(new Grow(TWO_THIRDS), id)).get(60, TimeUnit.SECONDS)
            .value());
      }
      io.eyrie.multicast.GroupId home = c.locationOf(ids[0]).get(30, TimeUnit.SECONDS);
      for (ObjId id : ids) {
        assertEquals(home, c.locationOf(id).get(30, TimeUnit.SECONDS), "gathered");
      }
      io.eyrie.core.PartitionTable t = c.drain(home, 64, java.time.Duration.ofSeconds(90)).get(120, TimeUnit.SECONDS);
      assertTrue(t.drained(home), t.toString());
      assertEquals(3L * TWO_THIRDS, c.sendAccess(Command.access(new Size(), ids)).get(60, TimeUnit.SECONDS).value(),
          "every object arrived whole");
      assertTrue(c.audit().get(30, TimeUnit.SECONDS).clean());
    }
  }
}
