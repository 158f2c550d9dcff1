package io.eyrie.it;

import static io.eyrie.it.DssmrFixture.ORACLE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Client;
import io.eyrie.core.ClientStats;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Reply;
import io.eyrie.core.protocol.ConsultReq;
import io.eyrie.core.protocol.CoreReply;
import io.eyrie.core.protocol.DeleteReq;
import io.eyrie.core.protocol.MoveReq;
import io.eyrie.core.protocol.Prophecy;
import io.eyrie.examples.bank.BankOps;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MulticastClient;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Each path of the paper's Algorithms 2-4, on a real cluster of 4 partitions and an oracle. */
@Timeout(120)
class ProtocolPathsTest {
  static EmbeddedCluster cluster;
  static Client client;
  static MulticastClient raw;

  @BeforeAll
  static void start() {
    cluster = DssmrFixture.bank(4);
    client = DssmrFixture.client(cluster, Client.Mode.DSSMR, 3);
    raw = MulticastClient.connect(cluster.cluster(), new io.eyrie.examples.bank.BankService().get().registry());
  }

  @AfterAll
  static void stop() {
    raw.close();
    client.close();
    cluster.close();
  }

  static Reply get(java.util.concurrent.CompletableFuture<Reply> f) throws Exception {
    return f.get(60, TimeUnit.SECONDS);
  }

  static ObjId id(long v) {
    return ObjId.valueOf(v);
  }

  static void create(long id, long balance) throws Exception {
    assertTrue(get(client.sendCreate(Command.create(id(id), balance))).isOk(), "create " + id);
  }

  static long[] read(Client c, long... ids) throws Exception {
    Reply r = get(c.sendAccess(Command.access(new BankOps.Read(), DssmrFixture.ids(ids))));
    assertTrue(r.isOk(), "read " + r);
    return (long[]) r.value();
  }

  static GroupId whereIs(long id) throws Exception {
    Prophecy p = (Prophecy) raw.query(ORACLE, new ConsultReq(Command.access(new BankOps.Read(), id(id))))
        .get(30, TimeUnit.SECONDS);
    return p.locations().get(id(id));
  }

  @Test
  void accessToMissingObjectIsNok() throws Exception {
    Reply r = get(client.sendAccess(Command.access(new BankOps.Read(), id(999_001))));
    assertFalse(r.isOk());
  }

  @Test
  void creatingAnExistingObjectIsNok() throws Exception {
    create(1_001, 5);
    Reply again = get(client.sendCreate(Command.create(id(1_001), 7L)));
    assertFalse(again.isOk(), "second create must be refused");
    assertArrayEquals(new long[] {5}, read(client, 1_001), "the first create's value stays");
  }

  @Test
  void deletingAMissingObjectIsNok() throws Exception {
    assertFalse(get(client.sendDelete(Command.delete(id(999_002), null))).isOk(), "never existed");
    create(1_002, 1);
    assertTrue(get(client.sendDelete(Command.delete(id(1_002), null))).isOk());
    assertFalse(get(client.sendAccess(Command.access(new BankOps.Read(), id(1_002)))).isOk(), "deleted");
    Reply again = get(client.sendDelete(Command.delete(id(1_002), null)));
    assertFalse(again.isOk(), "deleting again finds nothing");
    assertEquals(Reply.Status.NOT_FOUND, again.status(), again.toString());
    assertEquals(id(1_002), again.object(), "the reply names the missing object");
    Reply never = get(client.sendDelete(Command.delete(id(999_003), null)));
    assertEquals(Reply.Status.NOT_FOUND, never.status());
    assertEquals(id(999_003), never.object());
  }

  @Test
  void deleteSentToTheWrongPartitionIsRetried() throws Exception {
    create(1_003, 1);
    GroupId at = whereIs(1_003);
    GroupId wrong = cluster.cluster().partitions().stream().filter(g -> !g.equals(at)).findFirst().orElseThrow();
    Command del = Command.delete(id(1_003), null);
    CoreReply r = (CoreReply) raw.multicast(new TreeSet<>(List.of(ORACLE, wrong)), wrong,
        new DeleteReq(del, wrong)).get(30, TimeUnit.SECONDS);
    assertEquals(CoreReply.Status.RETRY, r.status());
    assertEquals(at, whereIs(1_003), "the object stays where it was");
    assertArrayEquals(new long[] {1}, read(client, 1_003));
  }

  @Test
  void staleCacheLeadsToRetryConsultAndSuccess() throws Exception {
    create(1_010, 10);
    create(1_011, 20);
    try (Client other = DssmrFixture.client(cluster, Client.Mode.DSSMR, 3)) {
      read(client, 1_010);
      GroupId cached = client.cachedLocation(id(1_010));
      assertEquals(whereIs(1_010), cached);
      // Another proxy gathers 1_010 with an object elsewhere until 1_010 has left its old partition.
      long partner = 1_011;
      for (int i = 0; i < 20 && whereIs(1_010).equals(cached); i++) {
        long p = 1_100 + i;
        create(p, 0);
        if (!whereIs(p).equals(cached)) {
          partner = p;
          read(other, 1_010, partner);
        }
      }
      assertNotEquals(cached, whereIs(1_010), "1_010 moved away");
      ClientStats before = client.stats();
      assertArrayEquals(new long[] {10}, read(client, 1_010));
      ClientStats after = client.stats();
      assertEquals(before.retries() + 1, after.retries(), "the stale cache cost one retry");
      assertEquals(before.consults() + 1, after.consults(), "and one consult");
      assertEquals(whereIs(1_010), client.cachedLocation(id(1_010)), "the cache was refreshed");
    }
  }

  @Test
  void moveOfAnObjectThatMovedAwayIsRefusedAndTheCommandCompletes() throws Exception {
    create(1_020, 30);
    GroupId at = whereIs(1_020);
    List<GroupId> others = cluster.cluster().partitions().stream().filter(g -> !g.equals(at)).toList();
    GroupId wrongSource = others.get(0);
    GroupId dst = others.get(1);
    MoveReq stale = new MoveReq(new ObjId[] {id(1_020)}, wrongSource, dst);
    CoreReply r = (CoreReply) raw.multicast(new TreeSet<>(List.of(ORACLE, wrongSource, dst)), dst, stale)
        .get(30, TimeUnit.SECONDS);
    assertEquals(CoreReply.Status.OK, r.status());
    assertEquals(0, r.value(), "nothing was moved");
    assertEquals(at, whereIs(1_020), "the oracle refused the stale move");
    assertArrayEquals(new long[] {30}, read(client, 1_020));
    DssmrFixture.assertAuditClean(client, 30);
  }

  @Test
  void fallbackAfterTheThresholdExecutesAcrossThreePartitions() throws Exception {
    long[] ids = {1_030, 1_031, 1_032};
    for (long i : ids) {
      create(i, 100);
    }
    // Three objects on three partitions: the default placement spreads new objects.
    Set<GroupId> where = new TreeSet<>();
    long extra = 1_033;
    while (new TreeSet<>(List.of(whereIs(ids[0]), whereIs(ids[1]), whereIs(ids[2]))).size() < 3) {
      create(extra, 100);
      ids[2] = extra++;
    }
    for (long i : ids) {
      where.add(whereIs(i));
    }
    assertEquals(3, where.size());
    try (Client ssmrOnly = DssmrFixture.client(cluster, Client.Mode.DSSMR, 0)) {
      Reply r = get(ssmrOnly.sendAccess(Command.access(new BankOps.Transfer(ids[0], ids[1], 40), id(ids[0]), id(ids[1]))));
      assertEquals("ok", r.value());
      assertArrayEquals(new long[] {60, 140, 100}, read(ssmrOnly, ids));
      ClientStats st = ssmrOnly.stats();
      assertEquals(2, st.fallbacks());
      assertEquals(0, st.moves(), "the fallback moves nothing");
      for (long i : ids) {
        assertTrue(where.contains(whereIs(i)), "objects stayed in place");
      }
    }
    DssmrFixture.assertAuditClean(client, 30);
  }
}
