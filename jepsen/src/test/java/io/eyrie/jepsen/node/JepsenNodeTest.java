package io.eyrie.jepsen.node;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.Reply;
import io.eyrie.core.ObjId;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.NodeOptions;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The node's services on an embedded cluster (3 nodes, 2 partitions + oracle). */
class JepsenNodeTest {

  private static EmbeddedCluster cluster(java.util.function.Supplier<? extends io.eyrie.core.StateMachine> app) {
    return EmbeddedCluster.newBuilder().nodes(3).partitions(2).oracle(true)
        .options(NodeOptions.newBuilder().electionTimeoutMs(600, 1200).build())
        .app(JepsenNode.service(app)).start();
  }

  private static Client client(EmbeddedCluster c) {
    return Client.newBuilder().cluster(c.cluster()).service(JepsenNode.clientService()).build();
  }

  /** Creates the kv tests' anchor key, 1,000,000 (value 0), the partner of their keyed ops, and returns it. */
  /** A kv case: a client, the key 1 and an anchor key (created) to gather it with. */
  private interface KvCase {
    void run(Client cl, ObjId k, ObjId anchor) throws Exception;
  }

  /** Runs a kv case on a fresh cluster of the kv service. */
  private static void onKv(KvCase test) throws Exception {
    try (EmbeddedCluster c = cluster(JepsenNode.KvServer::new);
        Client cl = client(c)) {
      test.run(cl, ObjId.valueOf(1), createAnchor(cl));
    }
  }

  private static ObjId createAnchor(Client cl) throws Exception {
    ObjId anchor = ObjId.valueOf(1_000_000);
    assertTrue(cl.sendCreate(Command.create(anchor, 0L)).get(60, TimeUnit.SECONDS).isOk());
    return anchor;
  }

  private static Object call(Client cl, Command c, boolean create) throws Exception {
    return (create ? cl.sendCreate(c) : cl.sendAccess(c)).get(60, TimeUnit.SECONDS).value();
  }

  @Test
  @Timeout(180)
  void registerReadWriteCasAndPair() throws Exception {
    try (EmbeddedCluster c = cluster(JepsenNode.RegisterServer::new);
        Client cl = client(c)) {
      call(cl, Command.create(ObjId.valueOf(1), (Long) null), true);
      call(cl, Command.create(ObjId.valueOf(2), 5L), true);
      assertEquals(null, call(cl, Command.access(new JepsenNode.Read(), ObjId.valueOf(1)), false));
      assertEquals("ok", call(cl, Command.access(new JepsenNode.Write(3), ObjId.valueOf(1)), false));
      assertEquals(Boolean.TRUE, call(cl, Command.access(new JepsenNode.Cas(3, 4), ObjId.valueOf(1)), false));
      assertEquals(Boolean.FALSE, call(cl, Command.access(new JepsenNode.Cas(3, 9), ObjId.valueOf(1)), false));
      assertEquals(4L, call(cl, Command.access(new JepsenNode.Read(), ObjId.valueOf(1)), false));
      assertEquals("ok", call(cl, Command.access(new JepsenNode.WritePair(1, 7, 2, 8),
          ObjId.valueOf(1), ObjId.valueOf(2)), false));
      assertEquals(7L, call(cl, Command.access(new JepsenNode.Read(), ObjId.valueOf(1)), false));
      assertEquals(8L, call(cl, Command.access(new JepsenNode.Read(), ObjId.valueOf(2)), false));
    }
  }

  @Test
  @Timeout(180)
  void kvCreateDeleteAndAccessAnswers() throws Exception {
    onKv((cl, k, anchor) -> {
      // an access to an absent key answers nok before reaching the service
      assertFalse(cl.sendAccess(Command.access(new JepsenNode.Read(), k)).get(60, TimeUnit.SECONDS).isOk());
      assertFalse(cl.sendAccess(Command.access(new JepsenNode.Write(1), k)).get(60, TimeUnit.SECONDS).isOk());
      assertTrue(cl.sendCreate(Command.create(k, 5L)).get(60, TimeUnit.SECONDS).isOk());
      assertFalse(cl.sendCreate(Command.create(k, 6L)).get(60, TimeUnit.SECONDS).isOk(), "a second create is refused");
      assertEquals(5L, call(cl, Command.access(new JepsenNode.Read(), k), false));
      assertEquals(Boolean.TRUE, call(cl, Command.access(new JepsenNode.Cas(5, 7), k), false));
      assertEquals(Boolean.FALSE, call(cl, Command.access(new JepsenNode.Cas(5, 8), k), false));
      assertEquals("ok", call(cl, Command.access(new JepsenNode.Keyed(1, new JepsenNode.Write(9)), k, anchor), false));
      assertEquals(cl.cachedLocation(k), cl.cachedLocation(anchor));
      assertEquals(9L, call(cl, Command.access(new JepsenNode.Keyed(1, new JepsenNode.Read()), k, anchor), false));
      assertTrue(cl.sendDelete(Command.delete(k, null)).get(60, TimeUnit.SECONDS).isOk());
      assertFalse(cl.sendAccess(Command.access(new JepsenNode.Read(), k)).get(60, TimeUnit.SECONDS).isOk());
      // a delete of an absent key is refused, naming the key
      Reply gone = cl.sendDelete(Command.delete(k, null)).get(60, TimeUnit.SECONDS);
      assertEquals(Reply.Status.NOT_FOUND, gone.status());
      assertEquals(k, gone.object());
      assertTrue(cl.sendCreate(Command.create(k, 3L)).get(60, TimeUnit.SECONDS).isOk(), "re-created after the delete");
      assertEquals(3L, call(cl, Command.access(new JepsenNode.Read(), k), false));
      assertEquals(0L, call(cl, Command.access(new JepsenNode.Read(), anchor), false));
    });
  }

  @Test
  @Timeout(180)
  void kvFailingCreateIsRefusedAndThrowingWriteIsUndone() throws Exception {
    onKv((cl, k, anchor) -> {
      // createObject throws: REFUSED, and the key stays free
      Reply refused = cl.sendCreate(Command.create(k, new JepsenNode.FailingCreate(103))).get(60, TimeUnit.SECONDS);
      assertEquals(Reply.Status.REFUSED, refused.status(), refused::toString);
      assertEquals(Reply.Status.NOT_FOUND, cl.sendAccess(Command.access(new JepsenNode.Read(), k))
          .get(60, TimeUnit.SECONDS).status());
      assertTrue(cl.sendCreate(Command.create(k, 4L)).get(60, TimeUnit.SECONDS).isOk(), "the key is free after the refusal");
      assertEquals(4L, call(cl, Command.access(new JepsenNode.Read(), k), false));
      // the write throws after writing: a MulticastException, and the old value stays
      java.util.concurrent.ExecutionException threw = org.junit.jupiter.api.Assertions.assertThrows(
          java.util.concurrent.ExecutionException.class,
          () -> cl.sendAccess(Command.access(new JepsenNode.ThrowingWrite(205), k)).get(60, TimeUnit.SECONDS));
      assertTrue(threw.getCause() instanceof io.eyrie.multicast.MulticastException, threw::toString);
      assertEquals(4L, call(cl, Command.access(new JepsenNode.Read(), k), false));
      // with a partner: both keys are gathered (a move), then the write is undone
      threw = org.junit.jupiter.api.Assertions.assertThrows(java.util.concurrent.ExecutionException.class,
          () -> cl.sendAccess(Command.access(new JepsenNode.Keyed(1, new JepsenNode.ThrowingWrite(206)), k, anchor))
              .get(60, TimeUnit.SECONDS));
      assertTrue(threw.getCause() instanceof io.eyrie.multicast.MulticastException, threw::toString);
      assertEquals(4L, call(cl, Command.access(new JepsenNode.Keyed(1, new JepsenNode.Read()), k, anchor), false));
      assertEquals(0L, call(cl, Command.access(new JepsenNode.Read(), anchor), false));
      // a failing create of an existing key changes nothing either
      assertFalse(cl.sendCreate(Command.create(k, new JepsenNode.FailingCreate(107))).get(60, TimeUnit.SECONDS).isOk());
      assertEquals(4L, call(cl, Command.access(new JepsenNode.Read(), k), false));
    });
  }

  @Test
  @Timeout(180)
  void touchPairGathersWithoutWritingAndUnsafeReadsServeAppliedValues() throws Exception {
    JepsenNode.UnsafeReads view = new JepsenNode.UnsafeReads();
    com.sun.net.httpserver.HttpServer http = view.serve("127.0.0.1", 0);
    try (EmbeddedCluster c = cluster(() -> new JepsenNode.RegisterServer(view));
        Client cl = client(c)) {
      call(cl, Command.create(ObjId.valueOf(1), 5L), true);
      call(cl, Command.create(ObjId.valueOf(2), (Long) null), true);
      assertEquals("ok", call(cl, Command.access(new JepsenNode.TouchPair(1, 2), ObjId.valueOf(1), ObjId.valueOf(2)), false));
      assertEquals(cl.cachedLocation(ObjId.valueOf(1)), cl.cachedLocation(ObjId.valueOf(2)));
      assertEquals(5L, call(cl, Command.access(new JepsenNode.Read(), ObjId.valueOf(1)), false));
      assertEquals(null, call(cl, Command.access(new JepsenNode.Read(), ObjId.valueOf(2)), false));
      assertEquals("ok", call(cl, Command.access(new JepsenNode.Keyed(2, new JepsenNode.Write(9)), ObjId.valueOf(1), ObjId.valueOf(2)), false));
      assertEquals(9L, call(cl, Command.access(new JepsenNode.Keyed(2, new JepsenNode.Read()), ObjId.valueOf(1), ObjId.valueOf(2)), false));
      assertEquals(5L, call(cl, Command.access(new JepsenNode.Read(), ObjId.valueOf(1)), false));
      assertEquals("9", get(http, "/read?k=2"));
      assertEquals("5", get(http, "/read?k=1"));
      assertEquals("nil", get(http, "/read?k=77"));
      java.net.HttpURLConnection bad = (java.net.HttpURLConnection) new java.net.URL(
          "http://127.0.0.1:" + http.getAddress().getPort() + "/read?x=1").openConnection();
      assertEquals(400, bad.getResponseCode());
    } finally {
      http.stop(0);
    }
  }

  private static String get(com.sun.net.httpserver.HttpServer http, String path) throws Exception {
    java.net.URL url = new java.net.URL("http://127.0.0.1:" + http.getAddress().getPort() + path);
    try (java.io.InputStream in = url.openStream()) {
      return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
  }

  @Test
  @Timeout(180)
  void bankTransferAndReadAll() throws Exception {
    try (EmbeddedCluster c = cluster(io.eyrie.examples.bank.BankServer::new);
        Client cl = client(c)) {
      for (long k = 1; k <= 4; k++) {
        call(cl, Command.create(ObjId.valueOf(k), 10L), true);
      }
      assertEquals("ok", call(cl, Command.access(new io.eyrie.examples.bank.BankOps.Transfer(1, 3, 4), ObjId.valueOf(1), ObjId.valueOf(3)), false));
      assertEquals("insufficient",
          call(cl, Command.access(new io.eyrie.examples.bank.BankOps.Transfer(2, 4, 40), ObjId.valueOf(2), ObjId.valueOf(4)), false));
      Object all = call(cl, Command.access(new io.eyrie.examples.bank.BankOps.Read(),
          ObjId.valueOf(1), ObjId.valueOf(2), ObjId.valueOf(3), ObjId.valueOf(4)), false);
      assertArrayEquals(new long[] {6, 10, 14, 10}, (long[]) all);
    }
  }

  private record Exit(int code, String out, String err) {}

  private static Exit node(String... args) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
    int code = NodeCommand.run(args, new java.io.PrintStream(out, true, java.nio.charset.StandardCharsets.UTF_8),
        new java.io.PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8));
    return new Exit(code, out.toString(java.nio.charset.StandardCharsets.UTF_8),
        err.toString(java.nio.charset.StandardCharsets.UTF_8));
  }

  /**
   * The node's command line is checked before anything starts: the harness's flags (db.clj's
   * node-command) are all accepted, and a wrong line is one message and exit 2.
   */
  @Test
  void theNodeCommandLineIsCheckedBeforeAnythingStarts() {
    Exit help = node("--help");
    assertEquals(0, help.code());
    assertTrue(help.out().startsWith("usage: JepsenNode"), help.out());

    Exit bogus = node("--bogus-option", "1");
    assertEquals(2, bogus.code());
    assertEquals(1, bogus.err().lines().count(), bogus.err());
    assertTrue(bogus.err().contains("--bogus-option"), bogus.err());

    assertEquals(2, node("--service", "chirper").code());
    Exit unsafeKv = node("--service", "kv", "--unsafe-reads");
    assertEquals(2, unsafeKv.code());
    assertTrue(unsafeKv.err().contains("--unsafe-reads needs --service register"), unsafeKv.err());

    // Every flag the harness passes parses; only the missing cluster file stops the node.
    for (String[] line : new String[][] {
        {"--cluster", "no-such.conf", "--id", "1", "--service", "register", "--data", "d", "--unsafe-reads", "7301",
            "--snapshot-threshold", "50"},
        {"--cluster", "no-such.conf", "--id", "1", "--service", "register", "--data", "d", "--unsafe-reads"},
        {"--cluster", "no-such.conf", "--id", "1", "--service", "bank", "--storage", "d"}}) {
      Exit e = node(line);
      assertEquals(2, e.code(), e.err());
      assertTrue(e.err().contains("no cluster file"), e.err());
    }
  }
}
