package io.eyrie.core.internal;

import static io.eyrie.multicast.testing.TestGroups.ORACLE;
import static io.eyrie.multicast.testing.TestGroups.P0;
import static io.eyrie.multicast.testing.TestGroups.P1;
import static io.eyrie.multicast.testing.TestGroups.P2;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.CallbackHandler;
import io.eyrie.core.Client;
import io.eyrie.core.ClientStats;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Reply;
import io.eyrie.core.protocol.AccessReq;
import io.eyrie.core.protocol.ConsultReq;
import io.eyrie.core.protocol.CoreReply;
import io.eyrie.core.protocol.CreateReq;
import io.eyrie.core.protocol.MoveReq;
import io.eyrie.core.protocol.Prophecy;
import io.eyrie.core.protocol.ReadReq;
import io.eyrie.core.protocol.SsmrReq;
import io.eyrie.multicast.GroupId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The client proxy's protocol (Algorithm 2) driven through a fake transport that answers each
 * message as the test says, at once and in the caller's thread: no cluster, deterministic. Each
 * message sent is recorded as text (destinations, reply group, what it asks).
 */
@Timeout(10)
class ClientProxyTest {
  static final ObjId A = ObjId.valueOf(1);
  static final ObjId B = ObjId.valueOf(2);

  /** Records what the proxy sends and answers it with the test's functions (a future answers later). */
  static final class FakeTransport implements ProxyTransport {
    final List<String> log = new ArrayList<>();
    List<GroupId> partitions = List.of(P0, P1, P2);
    List<GroupId> afterRefresh;
    Function<Object, Object> partitionsAnswer = m -> CoreReply.ok(null);
    Function<Object, Object> oracleAnswer = m -> {
      throw new AssertionError("unexpected consult " + m);
    };

    @Override
    public CompletableFuture<Object> multicast(Set<GroupId> dests, GroupId replyGroup, Object payload) {
      log.add(new TreeSet<>(dests) + ">" + replyGroup + " " + describe(payload));
      return answer(partitionsAnswer.apply(payload));
    }

    @Override
    public CompletableFuture<Object> query(GroupId group, Object q) {
      log.add(group + "? " + describe(q));
      return answer(group.equals(ORACLE) ? oracleAnswer.apply(q) : partitionsAnswer.apply(q));
    }

    @Override
    public CompletableFuture<?> refreshView() {
      log.add("refresh");
      if (afterRefresh != null) {
        partitions = afterRefresh;
      }
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public List<GroupId> partitions() {
      return partitions;
    }

    @SuppressWarnings("unchecked")
    private static CompletableFuture<Object> answer(Object a) {
      return a instanceof CompletableFuture<?> f ? (CompletableFuture<Object>) f : CompletableFuture.completedFuture(a);
    }

    private static String describe(Object m) {
      if (m instanceof MoveReq r) {
        return "move " + Arrays.toString(r.objs()) + " " + r.src() + "->" + r.dst();
      }
      Command c = m instanceof AccessReq r ? r.cmd()
          : m instanceof SsmrReq r ? r.cmd()
          : m instanceof ConsultReq r ? r.cmd()
          : m instanceof ReadReq r ? r.cmd()
          : m instanceof CreateReq r ? r.cmd()
          : null;
      if (c == null) {
        throw new AssertionError("unexpected message " + m);
      }
      return m.getClass().getSimpleName() + " " + c.objects();
    }
  }

  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
  private final FakeTransport net = new FakeTransport();
  private final LocationCache cache = new LocationCache();

  @AfterEach
  void stopTimer() {
    timer.shutdownNow();
  }

  private ClientProxy proxy(Client.Mode mode, int retryThreshold) {
    return new ClientProxy(net, ORACLE, mode, retryThreshold, 60_000, timer, cache);
  }

  private static Prophecy at(GroupId target, Map<ObjId, GroupId> where) {
    return new Prophecy(Prophecy.Status.RETRY, new TreeMap<>(where), target);
  }

  private static Reply run(ClientProxy p, Command c) {
    return run(p, c, null);
  }

  private static Reply run(ClientProxy p, Command c, CallbackHandler h) {
    CompletableFuture<Reply> f = p.send(c, c.kind(), h, false);
    assertTrue(f.isDone(), "a fake that answers at once settles the command at once");
    return f.join();
  }

  @Test
  void aCacheMissConsultsTheOracleAndSendsToTheNamedPartitionThenHits() {
    net.oracleAnswer = m -> at(P1, Map.of(A, P1));
    net.partitionsAnswer = m -> CoreReply.ok("v");
    ClientProxy proxy = proxy(Client.Mode.DSSMR, 3);

    Reply r = run(proxy, Command.access("op", A));

    assertEquals(Reply.Status.OK, r.status());
    assertEquals("v", r.value());
    assertEquals(List.of("oracle? ConsultReq [#1]", "[p1]>p1 AccessReq [#1]"), net.log);
    assertEquals(P1, cache.get(A));

    net.log.clear();
    run(proxy, Command.access("op", A));
    assertEquals(List.of("[p1]>p1 AccessReq [#1]"), net.log, "the second command finds the object in the cache");
    ClientStats s = proxy.stats();
    assertEquals(List.of(2L, 1L, 1L, 2L), List.of(s.commands(), s.cacheHits(), s.consults(), s.direct()));
  }

  @Test
  void aRetryReconsultsTheOracleEvenThoughTheObjectIsCached() {
    cache.putAll(Map.of(A, P0)); // stale: the object has moved to p1
    List<Prophecy> prophecies = new ArrayList<>(List.of(at(P1, Map.of(A, P1))));
    net.oracleAnswer = m -> prophecies.remove(0);
    // p0 (where the message just logged went) no longer has the object; p1 has it.
    net.partitionsAnswer = m -> net.log.get(net.log.size() - 1).startsWith("[p0]")
        ? CoreReply.retry(new ObjId[0]) : CoreReply.ok("here");
    List<Integer> told = new ArrayList<>();
    CallbackHandler h = new CallbackHandler() {
      @Override
      public void done(Reply reply) {}

      @Override
      public void error(Command command, int retries) {
        told.add(retries);
      }
    };

    Reply r = run(proxy(Client.Mode.DSSMR, 3), Command.access("op", A), h);

    assertEquals("here", r.value());
    assertEquals(List.of("[p0]>p0 AccessReq [#1]", "oracle? ConsultReq [#1]", "[p1]>p1 AccessReq [#1]"), net.log);
    assertEquals(List.of(1), told);
    assertEquals(P1, cache.get(A));
  }

  @Test
  void afterTheRetryThresholdTheCommandFallsBackToSsmrOnEveryPartitionTheTransportKnows() {
    net.oracleAnswer = m -> at(P0, Map.of(A, P0));
    List<String> ssmrAnswers = new ArrayList<>(List.of("refused for a missing partition", "ok"));
    net.partitionsAnswer = m -> !(m instanceof SsmrReq) ? CoreReply.retry(new ObjId[0])
        : ssmrAnswers.remove(0).equals("ok") ? CoreReply.ok("all") : CoreReply.retry(null);
    GroupId p3 = GroupId.valueOf("p3");
    net.afterRefresh = List.of(P0, P1, P2, p3);
    ClientProxy proxy = proxy(Client.Mode.DSSMR, 2);

    Reply r = run(proxy, Command.access("op", A));

    assertEquals("all", r.value());
    assertEquals(List.of(
        "oracle? ConsultReq [#1]", "[p0]>p0 AccessReq [#1]",
        "oracle? ConsultReq [#1]", "[p0]>p0 AccessReq [#1]",
        "[oracle, p0, p1, p2]>p0 SsmrReq [#1]",
        "refresh",
        "[oracle, p0, p1, p2, p3]>p0 SsmrReq [#1]"), net.log);
    ClientStats s = proxy.stats();
    assertEquals(List.of(3L, 1L, 2L), List.of(s.retries(), s.fallbacks(), s.multiPartition()));
  }

  @Test
  void aMultiPartitionCommandWhoseProphecyNamesATargetMovesFirstThenAccesses() {
    net.oracleAnswer = m -> at(P1, Map.of(A, P0, B, P1));
    CompletableFuture<Object> moved = new CompletableFuture<>();
    net.partitionsAnswer = m -> m instanceof MoveReq ? moved : CoreReply.ok("together");
    ClientProxy proxy = proxy(Client.Mode.DSSMR, 3);

    CompletableFuture<Reply> f = proxy.send(Command.access("op", A, B), Command.Kind.ACCESS, null, false);

    assertEquals(List.of("oracle? ConsultReq [#1, #2]", "[oracle, p0, p1]>p1 move [#1] p0->p1"), net.log,
        "the access waits for the move, or it would be ordered before it at p1");
    moved.complete(CoreReply.ok(null));
    assertEquals("together", f.join().value());
    assertEquals("[p1]>p1 AccessReq [#1, #2]", net.log.get(2));
    assertEquals(List.of(P1, P1), List.of(cache.get(A), cache.get(B)));
    ClientStats s = proxy.stats();
    assertEquals(List.of(1L, 1L, 0L, 0L), List.of(s.moves(), s.movedObjects(), s.multiPartition(), s.direct()));
  }

  @Test
  void aMoveIntoAPartitionRetiredSinceTheConsultMakesTheProxyAskAgain() {
    // The first consult names p1, retired before the move reaches it; the second names p2.
    List<Prophecy> prophecies = new ArrayList<>(List.of(at(P1, Map.of(A, P0, B, P1)), at(P2, Map.of(A, P0, B, P2))));
    net.oracleAnswer = m -> prophecies.remove(0);
    net.partitionsAnswer = m -> m instanceof MoveReq r && r.dst().equals(P1) ? CoreReply.retry(null)
        : CoreReply.ok("together");
    ClientProxy proxy = proxy(Client.Mode.DSSMR, 3);

    Reply r = run(proxy, Command.access("op", A, B));

    assertEquals("together", r.value());
    assertEquals(List.of("oracle? ConsultReq [#1, #2]", "[oracle, p0, p1]>p1 move [#1] p0->p1",
        "oracle? ConsultReq [#1, #2]", "[oracle, p0, p2]>p2 move [#1] p0->p2", "[p2]>p2 AccessReq [#1, #2]"), net.log,
        "no command reaches the retired partition, and the proxy asks the oracle again");
    assertEquals(1L, proxy.stats().retries());
  }

  @Test
  void inSsmrModeAMultiPartitionCommandGoesToItsPartitionsWithoutMoving() {
    net.oracleAnswer = m -> at(P1, Map.of(A, P0, B, P1));

    run(proxy(Client.Mode.SSMR, 3), Command.access("op", A, B));

    assertEquals(List.of("oracle? ConsultReq [#1, #2]", "[p0, p1]>p0 SsmrReq [#1, #2]"), net.log);
  }

  @Test
  void aNokProphecyAnswersWithoutSendingAnything() {
    net.oracleAnswer = m -> Prophecy.nok(B);
    ClientProxy proxy = proxy(Client.Mode.DSSMR, 3);

    Reply missing = run(proxy, Command.access("op", A, B));
    Reply exists = run(proxy, Command.create(A, null));

    assertEquals(Reply.Status.NOT_FOUND, missing.status());
    assertEquals(B, missing.object());
    assertEquals(Reply.Status.EXISTS, exists.status());
    assertEquals(List.of("oracle? ConsultReq [#1, #2]", "oracle? ConsultReq [#1]"), net.log);
  }

  @Test
  void aReadThePartitionCannotServeGoesThroughTheLog() {
    cache.putAll(Map.of(A, P2));
    net.partitionsAnswer = m -> m instanceof ReadReq ? CoreReply.busy("held") : CoreReply.ok("logged");

    Reply r = proxy(Client.Mode.DSSMR, 3).send(Command.access("op", A), Command.Kind.ACCESS, null, true).join();

    assertEquals("logged", r.value());
    assertEquals(List.of("p2? ReadReq [#1]", "[p2]>p2 AccessReq [#1]"), net.log);
  }

  @Test
  void aCommandOfTheWrongKindFailsBeforeAnythingIsSent() {
    ClientProxy proxy = proxy(Client.Mode.DSSMR, 3);

    CompletableFuture<Reply> f = proxy.send(Command.create(A, null), Command.Kind.ACCESS, null, false);

    CompletionException e = assertThrows(CompletionException.class, f::join);
    assertInstanceOf(IllegalArgumentException.class, e.getCause());
    assertEquals(List.of(), net.log);
    assertEquals(0, proxy.stats().commands());
  }
}
