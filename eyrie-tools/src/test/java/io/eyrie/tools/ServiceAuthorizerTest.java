package io.eyrie.tools;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.Service;
import io.eyrie.core.ObjId;
import io.eyrie.core.Reply;
import io.eyrie.examples.bank.BankOps;
import io.eyrie.examples.bank.BankService;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.NodeStats;
import io.eyrie.multicast.ForbiddenRequestException;
import io.eyrie.multicast.Identity;
import io.eyrie.multicast.MulticastException;
import io.eyrie.multicast.Node;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.TlsConfig;
import io.eyrie.multicast.testing.Waits;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The per-command authorization hook of {@link Service} (issue 28, item 2: "the service decides
 * per command"), on a 3-node bank cluster with mutual TLS on loopback whose hook lets client
 * {@code a} touch only the accounts 1000 to 1999, throws on account 1666, and lets the admin do
 * anything: a's commands on its accounts run; on another account, or across one of its own and
 * another, they are refused FORBIDDEN with the hook's reason and change nothing; a throwing hook
 * refuses; the hook saw the peer's identity and the command's objects; the refusals count in
 * {@code eyrie_endpoint_forbidden_total}; a node identity is not put to the hook.
 */
@Timeout(300)
class ServiceAuthorizerTest {
  private static final long WAIT_S = 60;
  /** What the hook was asked, as "name/role:objects". */
  private static final List<String> ASKED = new CopyOnWriteArrayList<>();
  private static final ObjId BOOM = ObjId.valueOf(1666);
  private static final ObjId FROZEN = ObjId.valueOf(1777);

  @TempDir
  static Path tmp;
  private static Path dir;
  private static Service bank;
  private static EmbeddedCluster cluster;
  private static final Map<Integer, NodeHttp> HTTP = new TreeMap<>();

  /**
   * a may touch its accounts (1000 to 1999) only; the admin anything; the hook throws on 1666 and
   * refuses 1777 by throwing ForbiddenRequestException.
   */
  private static Service.Authorizer.Decision decide(Identity peer, Command cmd) {
    ASKED.add(peer.name() + "/" + peer.role().label() + ":" + cmd.objects());
    if (cmd.objects().contains(BOOM)) {
      throw new IllegalStateException("the account directory is down");
    }
    if (cmd.objects().contains(FROZEN)) {
      throw new ForbiddenRequestException("account 1777 is frozen");
    }
    if (peer.role() == Identity.Role.ADMIN) {
      return Service.Authorizer.Decision.allow();
    }
    for (ObjId o : cmd.objects()) {
      if (!(peer.name().equals("a") && o.value() >= 1000 && o.value() < 2000)) {
        return Service.Authorizer.Decision.deny("account " + o.value() + " is not " + peer.name() + "'s");
      }
    }
    return Service.Authorizer.Decision.allow();
  }

  @BeforeAll
  static void certificatesAndCluster() throws Exception {
    dir = tmp.resolve("cluster");
    ClientTlsTest.certs("--out", dir.toString(), "--nodes", "1,2,3", "--admin", "ops", "--client", "a");
    bank = new BankService().get().toBuilder().authorizer(ServiceAuthorizerTest::decide).build();
    cluster = EmbeddedCluster.newBuilder().nodes(3).partitions(2).oracle(true).app(bank).tls(dir).start();
    MetricsScrape.serve(cluster, HTTP);
  }

  @AfterAll
  static void stop() {
    MetricsScrape.close(HTTP, cluster);
  }

  private static Client client(String who) {
    return Client.newBuilder().cluster(cluster.cluster()).service(bank).tls(TlsConfig.fromDir(dir, who))
        .totalTimeoutMs(20_000).build();
  }

  private static MulticastException forbidden(Future<?> f) {
    ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(WAIT_S, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof MulticastException, "a MulticastException: " + e.getCause());
    MulticastException m = (MulticastException) e.getCause();
    assertEquals(Status.FORBIDDEN, m.status(), m.getMessage());
    return m;
  }

  private static long forbiddenCount() {
    long n = 0;
    for (Node node : cluster.runningNodes().values()) {
      n += node.endpointStats().forbidden();
    }
    return n;
  }

  private static long[] balances(Client c, long... ids) throws Exception {
    ObjId[] o = new ObjId[ids.length];
    for (int i = 0; i < ids.length; i++) {
      o[i] = ObjId.valueOf(ids[i]);
    }
    Reply r = c.sendRead(Command.access(new BankOps.Read(), o)).get(WAIT_S, TimeUnit.SECONDS);
    assertTrue(r.isOk(), r.toString());
    return (long[]) r.value();
  }

  @Test
  @Timeout(180)
  void aClientIsAllowedOnItsAccountsAndRefusedOnAnothersWithTheReason() throws Exception {
    long countBefore = forbiddenCount();
    double metricBefore = metric("eyrie_endpoint_forbidden_total");
    try (Client a = client("client-a"); Client ops = client("admin-ops")) {
      assertTrue(a.sendCreate(Command.create(ObjId.valueOf(1001), 100L)).get(WAIT_S, TimeUnit.SECONDS).isOk());
      assertTrue(a.sendCreate(Command.create(ObjId.valueOf(1002), 100L)).get(WAIT_S, TimeUnit.SECONDS).isOk());
      assertEquals("ok", a.sendAccess(Command.access(new BankOps.Transfer(1001, 1002, 5), ObjId.valueOf(1001),
          ObjId.valueOf(1002))).get(WAIT_S, TimeUnit.SECONDS).value());
      assertTrue(ASKED.stream().anyMatch(s -> s.equals("a/client:[#1001, #1002]")),
          "the hook saw a's identity and the transfer's objects: " + ASKED);
      assertTrue(ops.sendCreate(Command.create(ObjId.valueOf(2001), 100L)).get(WAIT_S, TimeUnit.SECONDS).isOk(),
          "the admin may create any account");

      MulticastException create = forbidden(a.sendCreate(Command.create(ObjId.valueOf(2002), 100L)));
      assertTrue(create.getMessage().contains("forbidden: identity a (client) may not ")
          && create.getMessage().contains("account 2002 is not a's"), create.getMessage());
      MulticastException transfer = forbidden(a.sendAccess(Command.access(new BankOps.Transfer(2001, 1001, 50),
          ObjId.valueOf(1001), ObjId.valueOf(2001))));
      assertTrue(transfer.getMessage().contains("account 2001 is not a's"), transfer.getMessage());
      MulticastException read = forbidden(a.sendRead(Command.access(new BankOps.Read(), ObjId.valueOf(2001))));
      assertTrue(read.getMessage().contains("account 2001 is not a's"), read.getMessage());

      // Nothing of the refused commands ran: 2001 still holds 100, 2002 was never created.
      assertArrayEquals(new long[] {95, 105, 100}, balances(ops, 1001, 1002, 2001));
      assertEquals(Reply.Status.NOT_FOUND, ops.sendRead(Command.access(new BankOps.Read(), ObjId.valueOf(2002)))
          .get(WAIT_S, TimeUnit.SECONDS).status(), "the refused create created nothing");
      // a still runs its own commands after the refusals.
      assertArrayEquals(new long[] {95}, balances(a, 1001));
    }
    assertTrue(forbiddenCount() >= countBefore + 3, "the refusals counted: " + (forbiddenCount() - countBefore));
    Waits.until(Duration.ofSeconds(10), () -> metric("eyrie_endpoint_forbidden_total") >= metricBefore + 3,
        () -> "eyrie_endpoint_forbidden_total moved in /metrics");
  }

  @Test
  @Timeout(120)
  void aHookThatThrowsDenies() throws Exception {
    long countBefore = forbiddenCount();
    try (Client a = client("client-a"); Client ops = client("admin-ops")) {
      MulticastException m = forbidden(a.sendCreate(Command.create(BOOM, 100L)));
      assertTrue(m.getMessage().contains("forbidden: identity a (client) may not ")
          && m.getMessage().contains("authorizer failed (IllegalStateException)"), m.getMessage());
      assertTrue(!m.getMessage().contains("directory is down"), "the exception's message stays on the node");
      MulticastException byAdmin = forbidden(ops.sendCreate(Command.create(BOOM, 100L)));
      assertTrue(byAdmin.getMessage().contains("identity ops (admin)"), byAdmin.getMessage());
      assertEquals(Reply.Status.NOT_FOUND, status(a, 1500), "a may still read its own missing account");
      // A hook may refuse by throwing the refusal itself: its reason goes through.
      MulticastException frozen = forbidden(a.sendCreate(Command.create(FROZEN, 100L)));
      assertTrue(frozen.getMessage().contains("account 1777 is frozen"), frozen.getMessage());
    }
    assertTrue(forbiddenCount() >= countBefore + 3, "the refusals counted");
  }

  @Test
  @Timeout(120)
  void aNodeIdentityIsNotAsked() throws Exception {
    try (Client node = client("node-2")) {
      // The hook would refuse 3001 to anyone but an admin; a node is not put to it.
      assertTrue(node.sendCreate(Command.create(ObjId.valueOf(3001), 7L)).get(WAIT_S, TimeUnit.SECONDS).isOk());
      assertArrayEquals(new long[] {7}, balances(node, 3001));
    }
    assertTrue(ASKED.stream().noneMatch(s -> s.startsWith("node-")), "the hook never saw a node: " + ASKED);
  }

  private static Reply.Status status(Client c, long id) throws Exception {
    return c.sendRead(Command.access(new BankOps.Read(), ObjId.valueOf(id))).get(WAIT_S, TimeUnit.SECONDS).status();
  }

  /** The sum over the nodes of a metric's samples whose labels contain {@code labels}. */
  private static double metric(String name, String... labels) {
    return MetricsScrape.sum(HTTP.values(), name, labels);
  }
}
