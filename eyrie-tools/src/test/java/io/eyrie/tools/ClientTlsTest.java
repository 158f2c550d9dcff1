package io.eyrie.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.PartitionTable;
import io.eyrie.core.Service;
import io.eyrie.examples.bank.BankService;
import io.eyrie.multicast.ClusterAdmin;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.NodeStats;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MulticastClient;
import io.eyrie.multicast.MulticastException;
import io.eyrie.multicast.Node;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.TlsConfig;
import io.eyrie.multicast.testing.RawConnection;
import io.eyrie.multicast.testing.Waits;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mutual TLS on the client port of a 3-node DS-SMR cluster (real Ratis groups and real
 * handshakes on loopback), with the certificates {@code eyrie certs} wrote: a client identity
 * runs commands; a client without a certificate, with another CA's, or speaking plaintext is
 * refused with a clear error; a client's partition change, audit and group change are refused
 * FORBIDDEN while an admin's succeed; the refusals count in {@code /metrics}; and malformed frames
 * still get their errors after the handshake.
 */
@Timeout(300)
class ClientTlsTest {
  private static final GroupId P0 = GroupId.valueOf("p0");
  private static final GroupId P1 = GroupId.valueOf("p1");
  private static final long WAIT_S = 60;

  @TempDir
  static Path tmp;
  private static Path dir;
  private static Path otherDir;
  private static Service bank;
  private static EmbeddedCluster cluster;
  private static final Map<Integer, NodeHttp> HTTP = new TreeMap<>();

  @BeforeAll
  static void certificatesAndCluster() throws Exception {
    dir = tmp.resolve("cluster");
    otherDir = tmp.resolve("other");
    certs("--out", dir.toString(), "--nodes", "1,2,3", "--admin", "ops", "--client", "app");
    certs("--out", otherDir.toString(), "--client", "app");
    bank = new BankService().get();
    cluster = EmbeddedCluster.newBuilder().nodes(3).partitions(2).oracle(true).app(bank).tls(dir)
        .options(NodeOptions.newBuilder().tlsHandshakeTimeoutMs(1500).frameIdleTimeoutMs(1500).build()).start();
    MetricsScrape.serve(cluster, HTTP);
  }

  @AfterAll
  static void stop() {
    MetricsScrape.close(HTTP, cluster);
  }

  /** Writes the certificates of a 3-node cluster (node-1..3, admin-ops, client-app) to {@code tmp/cluster}. */
  static Path clusterCerts(Path tmp) {
    Path d = tmp.resolve("cluster");
    certs("--out", d.toString(), "--nodes", "1,2,3", "--admin", "ops", "--client", "app");
    return d;
  }

  /** Runs {@code eyrie certs} with the arguments; it must succeed (shared with {@link RaftTlsTest}). */
  static void certs(String... args) {
    String[] r = CertsCommandTest.run(java.util.stream.Stream.concat(java.util.stream.Stream.of("certs"),
        java.util.stream.Stream.of(args)).toArray(String[]::new));
    assertEquals("0", r[0], r[1] + r[2]);
  }

  private static Client client(TlsConfig tls) {
    return Client.newBuilder().cluster(cluster.cluster()).service(bank).tls(tls).totalTimeoutMs(20_000).build();
  }

  private static long sum(ToLongFunction<NodeStats.Endpoint> f) {
    long n = 0;
    for (Node node : cluster.runningNodes().values()) {
      n += f.applyAsLong(node.endpointStats());
    }
    return n;
  }

  /** The cause a failed future failed with. */
  private static Throwable failure(Future<?> f) {
    ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(WAIT_S, TimeUnit.SECONDS));
    return e.getCause();
  }

  private static MulticastException forbidden(Future<?> f) {
    Throwable c = failure(f);
    assertTrue(c instanceof MulticastException, "a MulticastException: " + c);
    MulticastException m = (MulticastException) c;
    assertEquals(Status.FORBIDDEN, m.status(), m.getMessage());
    return m;
  }

  @Test
  @Timeout(120)
  void aClientIdentityRunsCommandsAndReadsCounters() throws Exception {
    try (Client app = client(TlsConfig.fromDir(dir, "client-app"))) {
      for (int i = 100; i < 104; i++) {
        assertTrue(app.sendCreate(Command.create(ObjId.valueOf(i), 10L)).get(WAIT_S, TimeUnit.SECONDS).isOk());
      }
      assertTrue(app.partitionStats(P0).get(WAIT_S, TimeUnit.SECONDS).objects() >= 0);
    }
  }

  @Test
  @Timeout(180)
  void aClientMayNotChangePartitionsOrAuditAnAdminMayDrainAndTheRefusalsCountInMetrics() throws Exception {
    long before = sum(NodeStats.Endpoint::forbidden);
    double metricBefore = metric("eyrie_endpoint_forbidden_total");
    try (Client app = client(TlsConfig.fromDir(dir, "client-app"));
         Client ops = client(TlsConfig.fromDir(dir, "admin-ops"))) {
      for (int i = 200; i < 210; i++) {
        assertTrue(app.sendCreate(Command.create(ObjId.valueOf(i), 10L)).get(WAIT_S, TimeUnit.SECONDS).isOk());
      }
      MulticastException drain = forbidden(app.drain(P1, 64, Duration.ofSeconds(30)));
      assertTrue(drain.getMessage().contains("forbidden: identity app (client) may not multicast PartitionChange"),
          drain.getMessage());
      assertTrue(drain.getMessage().contains("admin"), drain.getMessage());
      forbidden(app.retirePartition(P1));
      MulticastException audit = forbidden(app.audit());
      assertTrue(audit.getMessage().contains("forbidden: identity app (client) may not query StatsReq"),
          audit.getMessage());
      assertTrue(ops.partitionTable().get(WAIT_S, TimeUnit.SECONDS).active().contains(P1),
          "the client's refused changes changed nothing");

      PartitionTable t = ops.drain(P1, 64, Duration.ofSeconds(90)).get(120, TimeUnit.SECONDS);
      assertTrue(t.drained(P1), t.toString());
      assertTrue(ops.audit().get(WAIT_S, TimeUnit.SECONDS).clean(), "an admin may audit");
      // The client still runs commands after its refusals.
      assertTrue(app.sendCreate(Command.create(ObjId.valueOf(299), 10L)).get(WAIT_S, TimeUnit.SECONDS).isOk());
    }
    assertTrue(sum(NodeStats.Endpoint::forbidden) >= before + 3, "three refusals counted");
    Waits.until(Duration.ofSeconds(10), () -> metric("eyrie_endpoint_forbidden_total") >= metricBefore + 3,
        () -> "eyrie_endpoint_forbidden_total moved in /metrics");
  }

  @Test
  @Timeout(180)
  void aClientsGroupChangeIsRefusedAnAdminsSucceeds() throws Exception {
    GroupId added = GroupId.valueOf("p7");
    try (MulticastClient app = cluster.newClient(TlsConfig.fromDir(dir, "client-app"));
         MulticastClient ops = cluster.newClient(TlsConfig.fromDir(dir, "admin-ops"))) {
      Exception e = assertThrows(Exception.class,
          () -> ClusterAdmin.addGroup(app, added, List.of(1, 2, 3), Duration.ofSeconds(30)));
      Throwable c = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
      assertTrue(c instanceof MulticastException m && m.status() == Status.FORBIDDEN
          && m.getMessage().contains("forbidden: identity app (client) may not multicast GroupChange"), c.toString());
      assertTrue(!cluster.node(1).cluster().groups().containsKey(added), "the refused change added nothing");

      ClusterAdmin.addGroup(ops, added, List.of(1, 2, 3), Duration.ofSeconds(90));
      Waits.until(Duration.ofSeconds(30), () -> cluster.node(1).isOpen(added), () -> "p7 open at node 1");
      // Led before the next test runs: the tools' test expects every group of the shared cluster led.
      Waits.until(Duration.ofSeconds(60), () -> cluster.leaderOf(added) != 0, () -> "p7 led");
    }
  }

  @Test
  @Timeout(120)
  void certificatesFromAnotherCaAreRefusedEitherWay() throws Exception {
    long failuresBefore = sum(NodeStats.Endpoint::tlsHandshakeFailures);
    // The client does not trust the nodes' CA: it refuses them.
    try (Client other = client(TlsConfig.fromDir(otherDir, "client-app"))) {
      MulticastException m = forbidden(other.partitionStats(P0));
      assertTrue(m.getMessage().contains("TLS handshake with node") && m.getMessage().contains("not signed by a trusted CA"),
          m.getMessage());
    }
    // The client trusts the nodes' CA but presents another CA's certificate: the node refuses it.
    TlsConfig foreign = TlsConfig.of(dir.resolve("ca.pem"), otherDir.resolve("client-app.pem"),
        otherDir.resolve("client-app-key.pem"));
    try (Client other = client(foreign)) {
      MulticastException m = forbidden(other.partitionStats(P0));
      assertTrue(m.getMessage().contains("refused") && m.getMessage().contains("TLS"), m.getMessage());
    }
    Waits.until(Duration.ofSeconds(10), () -> sum(NodeStats.Endpoint::tlsHandshakeFailures) > failuresBefore,
        () -> "the node counted the refused handshake");
  }

  @Test
  @Timeout(60)
  void aClientWithoutACertificateIsRefused() throws Exception {
    long failuresBefore = sum(NodeStats.Endpoint::tlsHandshakeFailures);
    TlsConfig app = TlsConfig.fromDir(dir, "client-app");
    int port = cluster.cluster().node(1).clientPort();
    try (SSLSocket s = tlsSocket(sslContext(app, false), port);
         RawConnection raw = new RawConnection(s, new Codec(bank.registry()))) {
      // With TLSv1.3 the server reads the client's (empty) certificate after the client's side
      // of the handshake: the refusal comes as an alert on the first read.
      // Nothing is written: a write could race with the node's close (a broken pipe) and hide
      // the alert the read gets.
      IOException e = assertThrows(IOException.class, () -> {
        s.startHandshake();
        raw.receive();
      });
      assertTrue(e instanceof SSLException, e.toString());
      // The JDK server answers a missing certificate with bad_certificate (or certificate_required).
      String why = TlsConfig.explain(e);
      assertTrue(why.contains("bad_certificate") || why.contains("certificate_required")
          || why.contains("no client certificate"), why);
    }
    Waits.until(Duration.ofSeconds(10), () -> sum(NodeStats.Endpoint::tlsHandshakeFailures) > failuresBefore,
        () -> "the node counted the refused handshake");
  }

  @Test
  @Timeout(60)
  void aPlaintextClientIsToldThePortRequiresTls() throws Exception {
    try (Client plain = client(null)) {
      MulticastException m = forbidden(plain.partitionStats(P0));
      assertTrue(m.getMessage().contains("requires mutual TLS"), m.getMessage());
    }
    try (RawConnection raw = new RawConnection("127.0.0.1", cluster.cluster().node(2).clientPort(),
        new Codec(bank.registry()))) {
      raw.sendRaw(new byte[] {1, 2, 3, 4, 5, 6});
      Object reply = raw.receive();
      assertTrue(String.valueOf(reply).contains("status=FORBIDDEN")
          && String.valueOf(reply).contains("requires mutual TLS"), String.valueOf(reply));
      raw.timeout(5000);
      assertTrue(raw.closedByPeer());
    }
  }

  @Test
  @Timeout(60)
  void aHandshakeThatDoesNotFinishIsClosedAndCounted() throws Exception {
    long before = sum(NodeStats.Endpoint::tlsHandshakeTimeouts);
    double metricBefore = metric("eyrie_endpoint_tls_handshakes_failed_total", "reason=\"timeout\"");
    try (RawConnection silent = new RawConnection("127.0.0.1", cluster.cluster().node(3).clientPort(),
        new Codec(bank.registry()))) {
      silent.timeout(10_000);
      long t0 = System.nanoTime();
      assertTrue(silent.closedByPeer(), "closed by the node");
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertTrue(ms >= 1000, "not before the 1.5 s handshake timeout: " + ms + " ms");
    }
    Waits.until(Duration.ofSeconds(10), () -> sum(NodeStats.Endpoint::tlsHandshakeTimeouts) == before + 1,
        () -> "one handshake timeout counted");
    Waits.until(Duration.ofSeconds(10),
        () -> metric("eyrie_endpoint_tls_handshakes_failed_total", "reason=\"timeout\"") >= metricBefore + 1,
        () -> "in /metrics");
  }

  @Test
  @Timeout(120)
  void malformedFramesStillGetErrorsAfterTheHandshake() throws Exception {
    TlsConfig app = TlsConfig.fromDir(dir, "client-app");
    Codec codec = new Codec(bank.registry());
    int port = cluster.cluster().node(1).clientPort();
    long malformed = sum(NodeStats.Endpoint::malformedFrames);
    long tooLong = sum(NodeStats.Endpoint::oversizedFrames);
    // Garbage where a Kryo object should be; a length prefix past the frame limit; a negative one.
    List<byte[]> cases = List.of(
        frame(new byte[] {(byte) 0xFF, (byte) 0xFE, 7, 7, 7}),
        ByteBuffer.allocate(8).putInt(Integer.MAX_VALUE).putInt(0).array(),
        ByteBuffer.allocate(8).putInt(-16).putInt(0).array());
    for (byte[] bytes : cases) {
      try (SSLSocket s = tlsSocket(sslContext(app, true), port); RawConnection raw = new RawConnection(s, codec)) {
        s.startHandshake();
        raw.sendBytes(bytes);
        Object reply = raw.receive();
        assertTrue(String.valueOf(reply).contains("requestId=-1") && String.valueOf(reply).contains("status=BAD_REQUEST"),
            String.valueOf(reply));
        raw.timeout(5000);
        assertTrue(raw.closedByPeer(), "closed after " + reply);
      }
    }
    // A well-formed frame of the wrong type is answered and the connection stays open.
    try (SSLSocket s = tlsSocket(sslContext(app, true), port); RawConnection raw = new RawConnection(s, codec)) {
      raw.send("not a request");
      Object reply = raw.receive();
      assertTrue(String.valueOf(reply).contains("unexpected frame type"), String.valueOf(reply));
      raw.send("still here");
      assertTrue(String.valueOf(raw.receive()).contains("unexpected frame type"));
    }
    assertTrue(sum(NodeStats.Endpoint::malformedFrames) > malformed);
    assertTrue(sum(NodeStats.Endpoint::oversizedFrames) > tooLong);
    try (Client ok = client(app)) {
      assertTrue(ok.sendCreate(Command.create(ObjId.valueOf(400), 1L)).get(WAIT_S, TimeUnit.SECONDS).isOk(),
          "the node keeps serving");
    }
  }

  @Test
  @Timeout(120)
  void theToolsConnectAsTheIdentityTheyAreGivenAndAClientIsRefusedWhatNeedsAnAdmin() throws Exception {
    Path file = tmp.resolve("tls-cluster.conf");
    // A relative tls line: relative to the cluster file's directory.
    Files.writeString(file, "tls cluster\n" + cluster.cluster().toText());
    // status exits 1 while a group has no leader: a group another test added may still be electing.
    // (the node's view: the embedded cluster's configuration is the one it started with).
    Waits.until(Duration.ofSeconds(60), () -> cluster.node(1).cluster().groups().keySet().stream()
        .allMatch(g -> cluster.leaderOf(g) != 0), () -> "every group led before status");
    String[] status = run("status", "--cluster", file.toString(), "--locate", "100");
    assertEquals("0", status[0], status[1] + status[2]);
    assertTrue(status[1].contains("objects: p0="), status[1]);
    assertTrue(status[1].contains("object 100: "), status[1]);
    assertTrue(!status[1].contains("did not answer"), "the default identity is the one admin: " + status[1]);

    String[] audit = run("audit", "--cluster", file.toString(), "--as", "client-app");
    System.out.println("eyrie audit --as client-app:\n" + audit[2]);
    System.out.println("eyrie status (as admin-ops):\n" + status[1]);
    assertEquals("1", audit[0], audit[1] + audit[2]);
    assertTrue(audit[2].contains("forbidden: identity app (client) may not query StatsReq"), audit[2]);
    String[] asAdmin = run("audit", "--cluster", file.toString(), "--as", "admin-ops");
    assertEquals("0", asAdmin[0], asAdmin[1] + asAdmin[2]);

    String[] plain = run("audit", "--cluster", file.toString(), "--as", "nobody");
    assertEquals("2", plain[0], plain[1] + plain[2]);
    assertTrue(plain[2].contains("nobody.pem"), "names the missing file: " + plain[2]);
  }

  @Test
  @Timeout(60)
  void aNodeOffLoopbackWithoutTlsRefusesToStartInOneLine() throws Exception {
    Path file = tmp.resolve("off-loopback.conf");
    Files.writeString(file, "node 1 192.0.2.1 raft=7101 client=7201\ngroup oracle oracle 1\ngroup p0 partition 1\n");
    String[] r = run("node", "--cluster", file.toString(), "--id", "1", "--service", "io.eyrie.examples.kv.KvService",
        "--data", tmp.resolve("off-loopback-data").toString());
    assertEquals("2", r[0], r[1] + r[2]);
    assertEquals(1, r[2].strip().lines().count(), r[2]);
    assertTrue(r[2].contains("192.0.2.1, which is not loopback, without TLS") && r[2].contains("--insecure"), r[2]);
  }

  private static String[] run(String... args) {
    return CertsCommandTest.run(args);
  }

  @Test
  @Timeout(60)
  void aHalfSentTlsRecordIsClosedAfterTheFrameIdleTimeout() throws Exception {
    TlsConfig app = TlsConfig.fromDir(dir, "client-app");
    int port = cluster.cluster().node(2).clientPort();
    long before = sum(NodeStats.Endpoint::frameTimeouts);
    java.net.Socket plain = new java.net.Socket();
    plain.connect(new InetSocketAddress("127.0.0.1", port), 5000);
    SSLSocket s = (SSLSocket) sslContext(app, true).getSocketFactory().createSocket(plain, "127.0.0.1", port, true);
    try (RawConnection raw = new RawConnection(s, new Codec(bank.registry()))) {
      s.startHandshake();
      raw.send("ping"); // answered once the node has finished its side of the handshake
      assertTrue(String.valueOf(raw.receive()).contains("unexpected frame type"));
      // Three bytes of a record header, under the TLS layer: the frame decoder never sees them.
      plain.getOutputStream().write(new byte[] {23, 3, 3});
      plain.getOutputStream().flush();
      raw.timeout(10_000);
      Object reply = raw.receive();
      assertTrue(String.valueOf(reply).contains("status=BAD_REQUEST")
          && String.valueOf(reply).contains("no byte of a started TLS record"), String.valueOf(reply));
      assertTrue(raw.closedByPeer());
    }
    assertEquals(before + 1, sum(NodeStats.Endpoint::frameTimeouts), "counted as a frame timeout");
  }

  private static byte[] frame(byte[] body) {
    return ByteBuffer.allocate(4 + body.length).putInt(body.length).put(body).array();
  }

  static SSLSocket tlsSocket(SSLContext ctx, int port) throws IOException {
    SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket();
    s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
    return s;
  }

  /** A JDK TLS context trusting the configuration's CA, presenting its certificate if {@code withKey}. */
  static SSLContext sslContext(TlsConfig t, boolean withKey) throws Exception {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    int i = 0;
    for (X509Certificate c : t.trustedCertificates()) {
      trust.setCertificateEntry("ca" + i++, c);
    }
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    KeyManagerFactory kmf = null;
    if (withKey) {
      String pem = Files.readString(t.keyFile(), StandardCharsets.US_ASCII);
      String b64 = pem.replaceAll("-----[A-Z ]+-----", "");
      PrivateKey key = KeyFactory.getInstance(t.certificate().getPublicKey().getAlgorithm())
          .generatePrivate(new PKCS8EncodedKeySpec(Base64.getMimeDecoder().decode(b64)));
      KeyStore ks = KeyStore.getInstance("PKCS12");
      ks.load(null, null);
      ks.setKeyEntry("me", key, "x".toCharArray(), new Certificate[] {t.certificate()});
      kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(ks, "x".toCharArray());
    }
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
    return ctx;
  }

  /** The sum over the nodes of a metric's samples whose labels contain {@code labels}. */
  private static double metric(String name, String... labels) {
    return MetricsScrape.sum(HTTP.values(), name, labels);
  }
}
