package io.eyrie.it;

import static io.eyrie.it.DssmrFixture.create;
import static io.eyrie.it.DssmrFixture.get;
import static io.eyrie.it.DssmrFixture.id;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.PRObject;
import io.eyrie.core.Reply;
import io.eyrie.core.Service;
import io.eyrie.core.StateMachine;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.oracle.OracleStateMachine;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A service whose partition hooks misbehave, on a real cluster (an oracle and 2 partitions, 3
 * replicas each, over loopback): {@code createObject} throws, returns another object or one that
 * cannot be encoded; a command writes two objects and then throws, asks for more objects, or
 * leaves an object that cannot be encoded; {@code objectDeleted} throws. Whatever the client is
 * told is true (a refused create left nothing, a failed command changed nothing, an
 * acknowledged delete happened), for DS-SMR and S-SMR commands alike, and after every step the
 * oracle's map and the partitions agree (the audit is clean).
 */
@Timeout(180)
class MisbehavingApplicationTest {
  /** A counter. */
  static final class Tally extends PRObject {
    long n;
    Object junk;

    private Tally() {}

    Tally(ObjId id, long n) {
      super(id);
      this.n = n;
    }
  }

  /** Adds to every object of the command, then fails as told ("throw", "retry", "spoil"), or not ("none"). */
  record AddAll(long amount, String fail) {}

  /** Reads every object of the command. */
  record ReadAll() {}

  /** Creates that go wrong: these values make createObject throw, return another id, or an unencodable object. */
  static final long THROWS = -13;
  static final long WRONG_ID = -14;
  static final long UNENCODABLE = -15;
  /** Deleting an object holding this value makes objectDeleted throw. */
  static final long DELETE_HOOK_THROWS = 7;

  static final class Misbehaving extends StateMachine {
    @Override
    protected Object executeCommand(Command c) {
      if (c.op() instanceof ReadAll) {
        long[] out = new long[c.objects().size()];
        int i = 0;
        for (ObjId id : c.objects()) {
          out[i++] = ((Tally) getObject(id)).n;
        }
        return out;
      }
      AddAll a = (AddAll) c.op();
      Tally last = null;
      for (ObjId id : c.objects()) {
        last = (Tally) getObject(id);
        last.n += a.amount();
      }
      switch (a.fail()) {
        case "throw" -> throw new IllegalStateException("failed after writing");
        case "retry" -> {
          return retry(List.of(ObjId.valueOf(999_999)));
        }
        case "spoil" -> last.junk = new AtomicLong();
        default -> { }
      }
      return "done";
    }

    @Override
    protected PRObject createObject(Command c) {
      long v = (Long) c.op();
      if (v == THROWS) {
        throw new IllegalArgumentException("no tally may start at " + v);
      }
      if (v == WRONG_ID) {
        return new Tally(ObjId.valueOf(c.target().value() + 1), v);
      }
      Tally t = new Tally(c.target(), v);
      if (v == UNENCODABLE) {
        t.junk = new AtomicLong();
      }
      return t;
    }

    @Override
    protected void objectDeleted(PRObject object, Command delete) {
      if (((Tally) object).n == DELETE_HOOK_THROWS) {
        throw new IllegalStateException("cannot clean up after " + object.getId());
      }
    }
  }

  static final Service SERVICE = Service.newBuilder().type(100, Tally.class).type(101, AddAll.class)
      .type(102, ReadAll.class).type(103, long[].class).server(Misbehaving::new).oracle(OracleStateMachine::new).build();

  static EmbeddedCluster cluster;
  /** DS-SMR, with S-SMR only after 3 retries. */
  static Client client;
  /** S-SMR at once: creates and deletes go to every partition and the oracle. */
  static Client ssmr;

  @BeforeAll
  static void start() {
    cluster = EmbeddedCluster.newBuilder().nodes(3).partitions(2).oracle(true)
        .options(NodeOptions.newBuilder().electionTimeoutMs(600, 1200).build()).app(SERVICE).start();
    client = Client.newBuilder().cluster(cluster.cluster()).service(SERVICE).mode(Client.Mode.DSSMR).retryThreshold(3)
        .build();
    ssmr = Client.newBuilder().cluster(cluster.cluster()).service(SERVICE).mode(Client.Mode.DSSMR).retryThreshold(0)
        .build();
  }

  @AfterAll
  static void stop() {
    for (AutoCloseable c : new AutoCloseable[] {ssmr, client, cluster}) {
      if (c != null) {
        try {
          c.close();
        } catch (Exception e) {
          // closing
        }
      }
    }
  }

  static Reply read(Client c, long... ids) throws Exception {
    return get(c.sendAccess(Command.access(new ReadAll(), DssmrFixture.ids(ids))));
  }

  static void assertAuditClean() throws Exception {
    DssmrFixture.assertAuditClean(client);
  }

  @Test
  void aCreateThePartitionCannotMakeIsRefusedAndLeavesNothing() throws Exception {
    long id = 100;
    for (Client c : new Client[] {client, ssmr}) {
      for (long bad : new long[] {THROWS, WRONG_ID, UNENCODABLE}) {
        Reply r = create(c, id, bad);
        assertEquals(Reply.Status.REFUSED, r.status(), (c == ssmr ? "S-SMR " : "") + bad + ": " + r);
        assertTrue(r.reason().contains("createObject") || r.reason().contains("cannot be encoded"), r.reason());
        assertEquals(Reply.Status.NOT_FOUND, read(client, id).status(), "the refused create left nothing");
        assertEquals(Reply.Status.NOT_FOUND, read(ssmr, id).status(), "not at any partition either");
        assertAuditClean();
        assertTrue(create(c, id, 1).isOk(), "the key is free: a good create of it works");
        assertEquals(1L, ((long[]) read(client, id).value())[0]);
        assertTrue(get(c.sendDelete(Command.delete(id(id), null))).isOk());
        assertAuditClean();
        id++;
      }
    }
  }

  @Test
  void aCommandThatFailsAfterWritingChangesNothing() throws Exception {
    assertTrue(create(client, 200, 10).isOk());
    assertTrue(create(client, 201, 20).isOk());
    // Together first (a move, or S-SMR where they are), then every failure mode.
    assertEquals("done", get(client.sendAccess(Command.access(new AddAll(1, "none"), id(200), id(201)))).value());
    for (Client c : new Client[] {client, ssmr}) {
      for (String fail : new String[] {"throw", "spoil", "retry"}) {
        CompletableFuture<Reply> f = c.sendAccess(Command.access(new AddAll(5, fail), id(200), id(201)));
        if (fail.equals("retry")) {
          // The application keeps asking for an object that does not exist: the client gives up
          // on it, and nothing was written on the way.
          try {
            Reply r = get(f);
            assertTrue(!r.isOk(), "no outcome that says it took effect: " + r);
          } catch (ExecutionException e) {
            // a definite failure
          }
        } else {
          ExecutionException e = assertThrows(ExecutionException.class, () -> get(f), fail);
          assertTrue(String.valueOf(e.getCause()).contains(fail.equals("throw") ? "failed after writing" : "cannot be encoded"),
              String.valueOf(e.getCause()));
        }
        long[] now = (long[]) read(c, 200, 201).value();
        assertEquals(11, now[0], fail + ": the first write was undone");
        assertEquals(21, now[1], fail + ": the second write was undone");
      }
    }
    assertEquals("done", get(ssmr.sendAccess(Command.access(new AddAll(2, "none"), id(200), id(201)))).value());
    long[] now = (long[]) read(client, 200, 201).value();
    assertEquals(13, now[0], "a command that succeeds keeps its writes");
    assertEquals(23, now[1]);
    assertAuditClean();
  }

  @Test
  void aDeleteWhoseHookThrowsIsAcknowledgedBecauseItHappened() throws Exception {
    for (Client c : new Client[] {client, ssmr}) {
      long id = c == client ? 300 : 301;
      assertTrue(create(c, id, DELETE_HOOK_THROWS).isOk());
      Reply d = get(c.sendDelete(Command.delete(id(id), null)));
      assertTrue(d.isOk(), "the delete took effect, so it says so: " + d);
      assertEquals(Reply.Status.NOT_FOUND, read(client, id).status());
      assertEquals(Reply.Status.NOT_FOUND, read(ssmr, id).status());
      assertTrue(create(c, id, 1).isOk(), "and the key is free");
      assertAuditClean();
    }
  }
}
