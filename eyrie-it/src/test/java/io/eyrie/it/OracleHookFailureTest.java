package io.eyrie.it;

import static io.eyrie.it.DssmrFixture.create;
import static io.eyrie.it.DssmrFixture.get;
import static io.eyrie.it.DssmrFixture.id;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Reply;
import io.eyrie.examples.bank.BankOps;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.GroupId;
import io.eyrie.oracle.OracleStateMachine;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An oracle application whose hook throws ({@code created}, {@code deleted}, the placement) on
 * one object, on a real cluster of 2 partitions and an oracle (3 replicas each): the command is
 * answered REFUSED at once and changes nothing, the partition does not keep the object held, and
 * the next command on the object, at the oracle and at the partition, goes through. Before the
 * fix no verdict was sent: the create or delete, and every later command on the object, hung.
 */
@Timeout(120)
class OracleHookFailureTest {
  /** A create with this balance makes {@code created} throw. */
  static final long POISON_CREATED = -13;
  /** A create with this balance makes {@code getObjectPlacement} throw. */
  static final long POISON_PLACEMENT = -17;
  /** The first delete of this object makes {@code deleted} throw. */
  static final ObjId POISON_DELETED = ObjId.valueOf(300);

  /** An oracle with application bugs, deterministic (the same at every replica, in the log's order). */
  static final class Buggy extends OracleStateMachine {
    private final TreeSet<Long> deleteFailed = new TreeSet<>();

    @Override
    protected void created(Command create, GroupId at) {
      if (Long.valueOf(POISON_CREATED).equals(create.op())) {
        throw new IllegalStateException("created fails on " + create.target());
      }
    }

    @Override
    protected void deleted(ObjId id) {
      if (id.equals(POISON_DELETED) && deleteFailed.add(id.value())) {
        throw new NullPointerException("deleted fails once on " + id);
      }
    }

    @Override
    protected GroupId getObjectPlacement(Command create) {
      if (Long.valueOf(POISON_PLACEMENT).equals(create.op())) {
        throw new ArithmeticException("placement fails on " + create.target());
      }
      return super.getObjectPlacement(create);
    }

    @Override
    protected Object extraState() {
      return deleteFailed.isEmpty() ? null : new ArrayList<>(deleteFailed);
    }

    @Override
    @SuppressWarnings("unchecked")
    protected void restoreExtraState(Object state) {
      deleteFailed.clear();
      if (state != null) {
        deleteFailed.addAll((List<Long>) state);
      }
    }
  }

  static EmbeddedCluster cluster;
  static Client client;
  /** Goes to S-SMR at once: its creates are placed by the oracle's getObjectPlacement while applying. */
  static Client ssmr;

  @BeforeAll
  static void start() {
    cluster = DssmrFixture.bank(2, Buggy::new);
    client = DssmrFixture.client(cluster, Client.Mode.DSSMR, 3);
    ssmr = DssmrFixture.client(cluster, Client.Mode.DSSMR, 0);
  }

  @AfterAll
  static void stop() throws Exception {
    for (AutoCloseable r : new AutoCloseable[] {ssmr, client, cluster}) {
      if (r != null) {
        r.close();
      }
    }
  }

  static Reply read(long... ids) throws Exception {
    return get(client.sendAccess(Command.access(new BankOps.Read(), DssmrFixture.ids(ids))));
  }

  /** Refused, with the application's exception in the reason. */
  static void assertRefused(Reply r, Class<? extends Exception> thrown) {
    assertEquals(Reply.Status.REFUSED, r.status(), r.toString());
    assertTrue(r.reason().contains("oracle's application failed"), r.reason());
    assertTrue(r.reason().contains(thrown.getName() + ": "), "the exception in the reason: " + r.reason());
  }

  @Test
  void aCreateWhoseCreatedHookThrowsIsRefusedAndTheObjectIsFreeAfterwards() throws Exception {
    assertTrue(create(client, 101, 7).isOk());
    assertRefused(create(client, 100, POISON_CREATED), IllegalStateException.class);
    assertEquals(Reply.Status.NOT_FOUND, read(100).status(), "the refused create changed nothing");
    assertArrayEquals(new long[] {7}, (long[]) read(101).value(), "other objects go on");
    assertTrue(create(client, 100, 50).isOk(), "the object's next create is decided and applied");
    assertArrayEquals(new long[] {50, 7}, (long[]) read(100, 101).value());
    assertEquals("ok", get(client.sendAccess(Command.access(new BankOps.Transfer(100, 101, 20), id(100), id(101))))
        .value());
    assertArrayEquals(new long[] {30, 27}, (long[]) read(100, 101).value());
    assertEquals(Reply.Status.EXISTS, create(client, 100, 1).status());
    assertAuditClean();
  }

  @Test
  void aDeleteWhoseDeletedHookThrowsIsRefusedAndTheObjectStays() throws Exception {
    assertTrue(create(client, POISON_DELETED.value(), 9).isOk());
    assertRefused(get(client.sendDelete(Command.delete(POISON_DELETED, null))), NullPointerException.class);
    assertArrayEquals(new long[] {9}, (long[]) read(POISON_DELETED.value()).value(), "still there, unchanged");
    assertEquals(10L, get(client.sendAccess(Command.access(new BankOps.Deposit(1), POISON_DELETED))).value());
    assertTrue(get(client.sendDelete(Command.delete(POISON_DELETED, null))).isOk(), "the next delete goes through");
    assertEquals(Reply.Status.NOT_FOUND, read(POISON_DELETED.value()).status());
    assertTrue(create(client, POISON_DELETED.value(), 4).isOk());
    assertArrayEquals(new long[] {4}, (long[]) read(POISON_DELETED.value()).value());
    assertAuditClean();
  }

  @Test
  void anSsmrCreateWhosePlacementThrowsIsRefusedAtEveryPartition() throws Exception {
    assertRefused(create(ssmr, 200, POISON_PLACEMENT), ArithmeticException.class);
    assertEquals(Reply.Status.NOT_FOUND, read(200).status());
    assertTrue(create(ssmr, 200, 5).isOk(), "the object's next S-SMR create is decided and applied");
    assertArrayEquals(new long[] {5}, (long[]) read(200).value());
    assertTrue(create(client, 201, 6).isOk());
    assertEquals("ok", get(client.sendAccess(Command.access(new BankOps.Transfer(200, 201, 5), id(200), id(201))))
        .value());
    assertArrayEquals(new long[] {0, 11}, (long[]) read(200, 201).value());
    assertAuditClean();
  }

  /** The oracle's map and the partitions agree (the refused commands left nothing behind). */
  static void assertAuditClean() throws Exception {
    DssmrFixture.assertAuditClean(client);
  }
}
