package io.eyrie.multicast;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.internal.Wire;
import io.eyrie.multicast.internal.transport.ClientEndpoint;
import io.eyrie.multicast.internal.transport.RequestHandler;
import io.eyrie.multicast.testing.Waits;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link MulticastClient} against fake nodes: decoding, resends with the same id, timeouts, watermarks, refusals. */
@Timeout(60)
class MulticastClientTest {
  private static final CodecRegistry REGISTRY = CodecRegistry.empty();
  private static final Codec CODEC = new Codec(REGISTRY);
  private static final GroupId P0 = GroupId.valueOf("p0");
  private static final GroupId P1 = GroupId.valueOf("p1");

  /** A node's client port with a scriptable handler that records what it receives. */
  static final class FakeNode implements RequestHandler {
    final List<Wire.ClientRequest> seen = new CopyOnWriteArrayList<>();
    volatile Function<Wire.ClientRequest, CompletableFuture<Wire.ClientReply>> onMulticast = r -> reply(Status.OK,
        r.start().payload(), 0);
    ClientEndpoint endpoint;

    /** A node that takes every multicast and never answers it. */
    static FakeNode silent() {
      FakeNode n = new FakeNode();
      n.onMulticast = r -> never();
      return n;
    }

    @Override
    public CompletableFuture<Wire.ClientReply> multicast(Wire.ClientRequest r) {
      seen.add(r);
      return onMulticast.apply(r);
    }

    @Override
    public CompletableFuture<Wire.ClientReply> query(Wire.QueryRequest q) {
      return reply(Status.OK, q.query(), 0);
    }

    List<MsgId> ids() {
      List<MsgId> out = new ArrayList<>();
      seen.forEach(r -> out.add(r.start().id()));
      return out;
    }
  }

  private final List<AutoCloseable> toClose = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  static CompletableFuture<Wire.ClientReply> reply(Status status, byte[] body, int hint) {
    return CompletableFuture.completedFuture(new Wire.ClientReply(0, status, body, status == Status.OK ? null : "refused", hint));
  }

  static <T> CompletableFuture<T> never() {
    return new CompletableFuture<>();
  }

  /** Starts live nodes (null entries become dead nodes with nothing listening) and returns the cluster: p0 and p1 on all. */
  private ClusterConfig start(FakeNode... nodes) throws Exception {
    ClusterConfig.Builder b = ClusterConfig.newBuilder();
    List<Integer> ids = new ArrayList<>();
    for (int i = 0; i < nodes.length; i++) {
      int port;
      if (nodes[i] == null) {
        try (ServerSocket s = new ServerSocket(0)) {
          port = s.getLocalPort(); // free again once closed: connections are refused
        }
      } else {
        nodes[i].endpoint = ClientEndpoint.start("127.0.0.1", 0, CODEC, nodes[i], 1 << 20);
        toClose.add(nodes[i].endpoint);
        port = nodes[i].endpoint.port();
      }
      b.node(i + 1, "127.0.0.1", i + 1, port); // raft ports are never used here
      ids.add(i + 1);
    }
    return b.group(P0, ClusterConfig.Kind.PARTITION, ids).group(P1, ClusterConfig.Kind.PARTITION, ids).build();
  }

  private MulticastClient client(ClusterConfig cluster, long attemptMs, long totalMs) {
    MulticastClient c = MulticastClient.newBuilder().cluster(cluster).registry(REGISTRY)
        .attemptTimeoutMs(attemptMs).totalTimeoutMs(totalMs).build();
    toClose.add(c);
    return c;
  }

  private static Object get(CompletableFuture<Object> f) throws Exception {
    return f.get(20, TimeUnit.SECONDS);
  }

  private static Throwable failure(CompletableFuture<Object> f) {
    ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(20, TimeUnit.SECONDS));
    return e.getCause();
  }

  @Test
  void repliesDecode() throws Exception {
    FakeNode n1 = new FakeNode();
    FakeNode n2 = new FakeNode();
    MulticastClient c = MulticastClient.connect(start(n1, n2), REGISTRY);
    toClose.add(c);
    assertTrue(c.clientId() != 0);
    assertEquals("hello", get(c.multicast(Set.of(P1, P0), "hello")));
    assertArrayEquals(new byte[] {1, 2, 3}, (byte[]) get(c.multicast(Set.of(P0), new byte[] {1, 2, 3})));
    assertEquals(42L, get(c.multicast(Set.of(P0, P1), P1, 42L)));
    assertEquals("q", get(c.query(P1, "q")));
    List<Wire.ClientRequest> all = new ArrayList<>(n1.seen);
    all.addAll(n2.seen);
    all.sort((a, b) -> a.start().id().compareTo(b.start().id()));
    assertEquals(3, all.size());
    Wire.Start first = all.get(0).start();
    assertEquals(MsgId.valueOf(c.clientId(), 0, 0), first.id());
    assertArrayEquals(new GroupId[] {P0, P1}, first.dests(), "destinations sorted");
    assertEquals(P0, first.replyGroup(), "the smallest destination replies by default");
    assertEquals(P1, all.get(2).start().replyGroup());
    assertEquals(0, c.resends());
  }

  @Test
  void invalidArgumentsGiveFailedFutures() throws Exception {
    MulticastClient c = client(start(new FakeNode()), 1000, 5000);
    assertInstanceOf(IllegalArgumentException.class, failure(c.multicast(Set.of(P0, GroupId.valueOf("nope")), 1L)));
    assertInstanceOf(IllegalArgumentException.class, failure(c.multicast(Set.of(), 1L)));
    assertInstanceOf(IllegalArgumentException.class, failure(c.multicast(null, 1L)));
    assertInstanceOf(IllegalArgumentException.class, failure(c.multicast(Set.of(P0), P1, 1L)));
    assertInstanceOf(IllegalArgumentException.class, failure(c.multicast(Set.of(P0), new Object())));
    assertInstanceOf(IllegalArgumentException.class, failure(c.query(GroupId.valueOf("nope"), 1L)));
    assertEquals(7L, get(c.multicast(Set.of(P0), 7L)), "the client still works");
  }

  @Test
  void unavailableIsResentWithTheSameMsgId() throws Exception {
    AtomicInteger answered = new AtomicInteger();
    FakeNode n1 = new FakeNode();
    FakeNode n2 = new FakeNode();
    for (FakeNode n : List.of(n1, n2)) {
      n.onMulticast = r -> answered.getAndIncrement() < 2 ? reply(Status.UNAVAILABLE, null, 0)
          : reply(Status.OK, r.start().payload(), 0);
    }
    MulticastClient c = client(start(n1, n2), 3000, 20_000);
    assertEquals("x", get(c.multicast(Set.of(P0), "x")));
    List<MsgId> ids = new ArrayList<>(n1.ids());
    ids.addAll(n2.ids());
    assertEquals(3, ids.size(), "two unavailable answers, then success: " + ids);
    assertEquals(Set.of(MsgId.valueOf(c.clientId(), 0, 0)), new HashSet<>(ids), "every resend has the same id");
    assertEquals(2, c.resends());
    assertTrue(!n1.seen.isEmpty() && !n2.seen.isEmpty(), "an unavailable node's peer is tried");
  }

  @Test
  void silentNodeIsBypassedAfterTheAttemptTimeout() throws Exception {
    FakeNode silent = FakeNode.silent();
    FakeNode live = new FakeNode();
    MulticastClient c = client(start(silent, live), 300, 20_000);
    for (long i = 0; i < 4; i++) {
      long t0 = System.nanoTime();
      assertEquals(i, get(c.multicast(Set.of(P0), i)));
      boolean wentToSilent = silent.ids().contains(MsgId.valueOf(c.clientId(), i, 0));
      if (wentToSilent) {
        assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(250), "resent only after the timeout");
      }
    }
    assertTrue(!silent.seen.isEmpty(), "round-robin tried the silent node");
    assertTrue(live.ids().containsAll(silent.ids()), "the same ids were resent to the live node");
    assertEquals(silent.seen.size(), c.resends());
  }

  @Test
  void deadNodeIsSkipped() throws Exception {
    FakeNode live = new FakeNode();
    MulticastClient c = client(start(null, live, null), 10_000, 20_000);
    long t0 = System.nanoTime();
    for (long i = 0; i < 6; i++) {
      assertEquals(i, get(c.multicast(Set.of(P0, P1), i)));
    }
    assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(8), "refused connections do not wait for timeouts");
    assertEquals(6, new HashSet<>(live.ids()).size());
    assertTrue(c.resends() >= 1, "the first call found a dead node");
  }

  @Test
  void lostConnectionIsResentElsewhere() throws Exception {
    FakeNode doomed = FakeNode.silent();
    FakeNode live = new FakeNode();
    MulticastClient c = client(start(doomed, live), 30_000, 40_000);
    CompletableFuture<Object> f = c.multicast(Set.of(P0), "x"); // round-robin starts at node 1
    Waits.until(Duration.ofSeconds(10), () -> !doomed.seen.isEmpty(), () -> "request reached node 1");
    doomed.endpoint.close();
    assertEquals("x", f.get(10, TimeUnit.SECONDS), "resent long before the 30 s attempt timeout");
    assertEquals(doomed.ids(), live.ids());
  }

  @Test
  void watermarkAdvancesAsCallsFinish() throws Exception {
    FakeNode n = new FakeNode();
    List<CompletableFuture<Wire.ClientReply>> held = new CopyOnWriteArrayList<>();
    n.onMulticast = r -> {
      if ("hold".equals(CODEC.decode(r.start().payload()))) {
        CompletableFuture<Wire.ClientReply> f = new CompletableFuture<>();
        held.add(f);
        return f;
      }
      return reply(Status.OK, r.start().payload(), 0);
    };
    MulticastClient c = client(start(n), 20_000, 30_000);
    get(c.multicast(Set.of(P0), "a"));
    get(c.multicast(Set.of(P0), "b"));
    CompletableFuture<Object> hold = c.multicast(Set.of(P0), "hold");
    Waits.until(Duration.ofSeconds(10), () -> held.size() == 1, () -> "held request arrived");
    get(c.multicast(Set.of(P0), "c"));
    get(c.multicast(Set.of(P0), "d"));
    held.get(0).complete(new Wire.ClientReply(0, Status.OK, CODEC.encode("held"), null, 0));
    assertEquals("held", get(hold));
    get(c.multicast(Set.of(P0), "e"));
    List<Long> seqs = new ArrayList<>();
    List<Long> marks = new ArrayList<>();
    n.seen.forEach(r -> {
      seqs.add(r.start().id().seq());
      marks.add(r.start().watermark());
    });
    assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L), seqs);
    assertEquals(List.of(0L, 1L, 2L, 2L, 2L, 5L), marks, "the lowest unfinished seq");
  }

  @Test
  void totalTimeoutFailsWithTimeoutExceptionAndFinishesTheSeq() throws Exception {
    FakeNode n1 = FakeNode.silent();
    FakeNode n2 = FakeNode.silent();
    MulticastClient c = client(start(n1, n2), 200, 900);
    assertInstanceOf(TimeoutException.class, failure(c.multicast(Set.of(P0), "lost")));
    assertTrue(c.resends() >= 2, "resent while waiting: " + c.resends());
    Set<MsgId> ids = new HashSet<>(n1.ids());
    ids.addAll(n2.ids());
    assertEquals(Set.of(MsgId.valueOf(c.clientId(), 0, 0)), ids);
    n1.onMulticast = r -> reply(Status.OK, r.start().payload(), 0);
    n2.onMulticast = n1.onMulticast;
    assertEquals("next", get(c.multicast(Set.of(P0), "next")));
    List<Wire.ClientRequest> all = new ArrayList<>(n1.seen);
    all.addAll(n2.seen);
    Wire.Start next = all.stream().filter(r -> r.start().id().seq() == 1).findFirst().orElseThrow().start();
    assertEquals(1, next.watermark(), "a timed-out call counts as finished");
  }

  @Test
  void attemptTimeoutsDoubleUpToFourTimesAndTheTimeoutCarriesTheMsgId() throws Exception {
    FakeNode n1 = FakeNode.silent();
    FakeNode n2 = FakeNode.silent();
    record Resend(long nanos, MsgId id, int attempts, MulticastClient.ResendListener.Reason reason) {}
    List<Resend> resends = new CopyOnWriteArrayList<>();
    MulticastClient c = MulticastClient.newBuilder().cluster(start(n1, n2)).registry(REGISTRY)
        .attemptTimeoutMs(100).totalTimeoutMs(3000)
        .resendListener((id, node, attempts, reason) -> resends.add(new Resend(System.nanoTime(), id, attempts, reason)))
        .build();
    toClose.add(c);
    long t0 = System.nanoTime();
    Throwable t = failure(c.multicast(Set.of(P0), "slow"));
    MsgId id = MsgId.valueOf(c.clientId(), 0, 0);
    CallTimeoutException te = assertInstanceOf(CallTimeoutException.class, t);
    assertEquals(id, te.msgId());
    // 100, 200, 400, 400, ... ms: resends at 0.1, 0.3, 0.7, 1.1, ... 2.7 s, eight in 3 s (thirty without backoff).
    assertTrue(resends.size() >= 5 && resends.size() <= 8, "resends: " + resends.size());
    long prev = t0;
    for (int i = 0; i < resends.size(); i++) {
      Resend r = resends.get(i);
      assertEquals(id, r.id());
      assertEquals(i + 1, r.attempts());
      assertEquals(MulticastClient.ResendListener.Reason.ATTEMPT_TIMEOUT, r.reason());
      long expectedMs = 100L << Math.min(i, 2);
      long gapMs = TimeUnit.NANOSECONDS.toMillis(r.nanos() - prev);
      assertTrue(gapMs >= expectedMs - 5, "attempt " + (i + 1) + " waited " + gapMs + " ms, expected " + expectedMs);
      prev = r.nanos();
    }
    assertEquals(resends.size(), c.resends());
  }

  @Test
  void refusalsSurfaceAsMulticastException() throws Exception {
    FakeNode n = new FakeNode();
    MulticastClient c = client(start(n), 5000, 20_000);
    for (Status status : new Status[] {Status.BAD_REQUEST, Status.ERROR, Status.STALE}) {
      n.onMulticast = r -> reply(status, null, 0);
      MulticastException e = assertInstanceOf(MulticastException.class, failure(c.multicast(Set.of(P0), 1L)));
      assertEquals(status, e.status());
      assertTrue(e.getMessage().contains("refused"), e.getMessage());
    }
    assertEquals(0, c.resends(), "a definite answer is never resent");
  }

  /**
   * Review F3: EXPIRED means the reply group cannot tell whether it executed the message (another
   * destination may have made it run), so it is an unknown outcome, a {@link TimeoutException}
   * like the total timeout, never a definite {@link MulticastException}.
   */
  @Test
  void expiredIsAnUnknownOutcome() throws Exception {
    FakeNode n = new FakeNode();
    MulticastClient c = client(start(n), 5000, 20_000);
    n.onMulticast = r -> reply(Status.EXPIRED, null, 0);
    Throwable t = failure(c.multicast(Set.of(P0), 1L));
    ClientExpiredException e = assertInstanceOf(ClientExpiredException.class, t);
    assertInstanceOf(CallTimeoutException.class, e);
    assertEquals(c.clientId(), e.msgId().client());
    assertTrue(e.getMessage().contains("unknown"), e.getMessage());
    assertEquals(0, c.resends(), "EXPIRED is not resent");
  }

  @Test
  void leaderHintIsFollowed() throws Exception {
    FakeNode[] nodes = {new FakeNode(), new FakeNode(), new FakeNode()};
    for (FakeNode n : nodes) {
      n.onMulticast = r -> reply(Status.OK, r.start().payload(), 3);
    }
    MulticastClient c = client(start(nodes), 5000, 20_000);
    get(c.multicast(Set.of(P0), 0L));
    int before = nodes[2].seen.size();
    for (long i = 1; i <= 5; i++) {
      get(c.multicast(Set.of(P0), i));
    }
    assertEquals(before + 5, nodes[2].seen.size(), "every later call went to the hinted node");
  }

  @Test
  void concurrentCallsGetTheirOwnReplies() throws Exception {
    FakeNode[] nodes = {new FakeNode(), new FakeNode()};
    for (FakeNode n : nodes) {
      n.onMulticast = r -> CompletableFuture.supplyAsync(() -> new Wire.ClientReply(0, Status.OK,
          r.start().payload(), null, 0), CompletableFuture.delayedExecutor(ThreadLocalRandom.current().nextInt(5),
          TimeUnit.MILLISECONDS));
    }
    MulticastClient c = client(start(nodes), 5000, 20_000);
    List<CompletableFuture<Object>> fs = new CopyOnWriteArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      long base = t * 1000L;
      Thread th = new Thread(() -> {
        for (long i = 0; i < 100; i++) {
          long v = base + i;
          fs.add(c.multicast(Set.of(P0, P1), v).thenApply(o -> (Long) o == v ? "ok" : "wrong " + o + " for " + v));
        }
      });
      threads.add(th);
      th.start();
    }
    for (Thread th : threads) {
      th.join(20_000);
    }
    for (CompletableFuture<Object> f : fs) {
      assertEquals("ok", get(f));
    }
    Set<Long> seqs = new HashSet<>();
    for (FakeNode n : nodes) {
      for (Wire.ClientRequest r : n.seen) {
        assertTrue(seqs.add(r.start().id().seq()), "one request per seq");
        assertTrue(r.start().watermark() <= r.start().id().seq(), "the watermark never passes an unfinished seq");
      }
    }
    assertEquals(400, seqs.size());
  }

  @Test
  void closeFailsOutstandingCalls() throws Exception {
    FakeNode n = FakeNode.silent();
    MulticastClient c = client(start(n), 20_000, 30_000);
    CompletableFuture<Object> f = c.multicast(Set.of(P0), 1L);
    Waits.until(Duration.ofSeconds(10), () -> !n.seen.isEmpty(), () -> "request arrived");
    c.close();
    assertInstanceOf(IllegalStateException.class, failure(f));
    assertInstanceOf(IllegalStateException.class, failure(c.multicast(Set.of(P0), 2L)));
    c.close(); // idempotent
  }
}
