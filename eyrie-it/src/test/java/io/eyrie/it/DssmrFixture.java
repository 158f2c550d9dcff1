package io.eyrie.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.AuditReport;
import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Reply;
import io.eyrie.examples.bank.BankOps;
import io.eyrie.examples.bank.BankService;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.oracle.OracleStateMachine;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** Starts embedded DS-SMR bank clusters for tests. */
final class DssmrFixture {
  /** An account's opening balance in the bank tests. */
  static final long INITIAL = 1000;
  static final GroupId ORACLE = GroupId.valueOf("oracle");
  static final GroupId P0 = GroupId.valueOf("p0");
  static final GroupId P1 = GroupId.valueOf("p1");
  static final GroupId P2 = GroupId.valueOf("p2");
  static final GroupId P3 = GroupId.valueOf("p3");

  private DssmrFixture() {}

  static EmbeddedCluster bank(int partitions, Supplier<? extends OracleStateMachine> oracle) {
    return EmbeddedCluster.newBuilder().nodes(3).partitions(partitions).oracle(true)
        .options(NodeOptions.newBuilder().electionTimeoutMs(600, 1200).build())
        .app(BankService.with(oracle)).start();
  }

  static EmbeddedCluster bank(int partitions) {
    return bank(partitions, OracleStateMachine::new);
  }

  static Client client(EmbeddedCluster c, Client.Mode mode, int retryThreshold) {
    return Client.newBuilder().cluster(c.cluster()).service(new BankService().get()).mode(mode)
        .retryThreshold(retryThreshold).build();
  }

  /** The random seed of a test run: -Deyrie.seed=N replays one; printed so that a failure can be replayed. */
  static long seed(String run) {
    long seed = Long.getLong("eyrie.seed", System.nanoTime());
    System.out.println(run + " seed=" + seed);
    return seed;
  }

  /** The objects with these ids, in order. */
  static SortedSet<ObjId> ids(long... ids) {
    SortedSet<ObjId> objs = new TreeSet<>();
    for (long i : ids) {
      objs.add(ObjId.valueOf(i));
    }
    return objs;
  }

  /** Asserts that the oracle's map and the partitions agree, as the client's audit sees them within 30 s. */
  static void assertAuditClean(Client client) throws Exception {
    assertAuditClean(client, 30);
  }

  /**
   * Asserts that the oracle's map and the partitions agree, as the client's audit sees them
   * within {@code seconds}; returns the audit.
   */
  static AuditReport assertAuditClean(Client client, int seconds) throws Exception {
    AuditReport r = client.audit().get(seconds, TimeUnit.SECONDS);
    assertTrue(r.clean(), "the oracle's map and the partitions agree: " + r);
    return r;
  }

  /** Waits 20 s, well within the client's 30 s: a hung command fails here, not as the client's timeout. */
  static Reply get(CompletableFuture<Reply> f) throws Exception {
    return f.get(20, TimeUnit.SECONDS);
  }

  static ObjId id(long v) {
    return ObjId.valueOf(v);
  }

  /**
   * Creates accounts 0 to {@code accounts - 1}, each holding {@code initial}, through a client of
   * its own, and checks each create; returns their ids.
   */
  static TreeSet<ObjId> createAccounts(EmbeddedCluster c, Client.Mode mode, int accounts, long initial)
      throws Exception {
    TreeSet<ObjId> all = new TreeSet<>();
    try (Client setup = client(c, mode, 3)) {
      for (int i = 0; i < accounts; i++) {
        ObjId id = ObjId.valueOf(i);
        all.add(id);
        assertTrue(setup.sendCreate(Command.create(id, initial)).get(60, TimeUnit.SECONDS).isOk());
      }
    }
    return all;
  }

  /** Creates object {@code id} with {@code value} through the client; returns the reply. */
  static Reply create(Client c, long id, long value) throws Exception {
    return get(c.sendCreate(Command.create(id(id), value)));
  }

  /**
   * A transfer of 1 to {@code maxAmount} between two different accounts of 0 to
   * {@code accounts - 1}, drawn from {@code rnd} in this order: source, destination, amount.
   */
  static Command randomTransfer(Random rnd, int accounts, int maxAmount) {
    long from = rnd.nextInt(accounts);
    long to = (from + 1 + rnd.nextInt(accounts - 1)) % accounts;
    return Command.access(new BankOps.Transfer(from, to, 1 + rnd.nextInt(maxAmount)), ObjId.valueOf(from), ObjId.valueOf(to));
  }

  /** Asserts that a transfer ran: it moved the money or found the balance insufficient. */
  static void assertTransferRan(Reply r) {
    assertTrue(r.isOk() && ("ok".equals(r.value()) || "insufficient".equals(r.value())), "transfer: " + r);
  }

  /** What one load thread of {@link #writers} does. */
  interface Writer {
    /**
     * Runs the writer.
     *
     * @param index the writer's number, from 0
     * @param rnd its random source, seeded with the run's seed plus its number
     * @throws Throwable any failure, which the thread records
     */
    void run(int index, Random rnd) throws Throwable;
  }

  /**
   * Threads, not yet started, for {@code count} writers; each adds what it throws to
   * {@code errors}.
   */
  static List<Thread> writers(int count, long seed, List<Throwable> errors, Writer writer) {
    List<Thread> threads = new ArrayList<>();
    for (int w = 0; w < count; w++) {
      final int wi = w;
      threads.add(new Thread(() -> {
        try {
          writer.run(wi, new Random(seed + wi));
        } catch (Throwable e) {
          errors.add(e);
        }
      }));
    }
    return threads;
  }
}
