package io.eyrie.oracle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.protocol.Begun;
import io.eyrie.core.protocol.ConsultReq;
import io.eyrie.core.protocol.CreateReq;
import io.eyrie.core.protocol.Observed;
import io.eyrie.core.protocol.PlanMoves;
import io.eyrie.core.protocol.PlanReq;
import io.eyrie.core.protocol.Prophecy;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.testing.FakeExecutionContext;
import io.eyrie.multicast.testing.TestGroups;
import io.eyrie.oracle.placement.PlacementPlanner;
import java.util.Random;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The oracle's GRAPH placement through its consults: it learns which objects are used together
 * and gathers them where its balanced plan puts them, and it stops moving objects when the
 * workload has no locality. No cluster: the oracle is driven with a fake execution context; only
 * the background planner runs on its own thread, so the tests poll for its plan.
 */
@Timeout(60)
class GraphPlacementTest {
  static final GroupId P0 = TestGroups.P0;
  static final GroupId P1 = TestGroups.P1;

  final Codec codec = OracleServerFixture.eyrieCodec();

  OracleStateMachine graphOracle() {
    OracleStateMachine o = new OracleStateMachine(OracleStateMachine.Placement.GRAPH);
    o.init(TestGroups.ORACLE, OracleServerFixture.CLUSTER, codec);
    return o;
  }

  /** Creates an object at a partition, as the protocol does (the partition's Begun, then the verdict). */
  void create(OracleStateMachine o, long id, GroupId at) {
    FakeExecutionContext c = new FakeExecutionContext(codec, TestGroups.ORACLE,
        new CreateReq(Command.create(ObjId.valueOf(id), 0L), at), at, TestGroups.ORACLE, at);
    o.deliver(c);
    c.receive(at, new Begun(at));
    o.resume(c);
    assertEquals(at, o.locationOf(ObjId.valueOf(id)));
  }

  GroupId consult(OracleStateMachine o, long a, long b) {
    Prophecy p = (Prophecy) o.query(new ConsultReq(Command.access("op", ObjId.valueOf(a), ObjId.valueOf(b))));
    assertEquals(Prophecy.Status.RETRY, p.status());
    return p.target();
  }

  /** Feeds consults from {@code workload} until {@code done} holds, failing after 30 s. */
  static void feedUntil(Runnable workload, BooleanSupplier done, String what) {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("timed out waiting for " + what);
      }
      workload.run();
      LockSupport.parkNanos(20_000_000L); // poll interval of a bounded wait
    }
  }

  PlacementPlanner.Plan plan(OracleStateMachine o) {
    GraphPlacement g = serverOf(o).graphPlacement();
    assertNotNull(g, "GRAPH mode has a learned placement");
    return g.plan();
  }

  static OracleServer serverOf(OracleStateMachine o) {
    try {
      java.lang.reflect.Field f = OracleStateMachine.class.getDeclaredField("server");
      f.setAccessible(true);
      return (OracleServer) f.get(o);
    } catch (ReflectiveOperationException e) {
      throw new AssertionError(e);
    }
  }

  /** An oracle with two communities of 6 (objects 1-6 and 7-12), each spread over both partitions. */
  OracleStateMachine twoSplitCommunities() {
    OracleStateMachine o = graphOracle();
    for (long id = 1; id <= 12; id++) {
      create(o, id, id % 2 == 0 ? P0 : P1);
    }
    return o;
  }

  /** Two distinct objects of one community (chosen at random), or null when the draw repeats one. */
  static long[] communityPair(Random rnd) {
    long base = rnd.nextBoolean() ? 1 : 7;
    long a = base + rnd.nextInt(6);
    long b = base + rnd.nextInt(6);
    return a == b ? null : new long[] {a, b};
  }

  /** A random source from -Deyrie.seed, or from a fresh seed; prints the seed, so that a run can be replayed. */
  private static Random seededRandom() {
    long seed = Long.getLong("eyrie.seed", new Random().nextLong());
    System.out.println("GraphPlacementTest seed " + seed);
    return new Random(seed);
  }

  @Test
  void communitiesSplitOverThePartitionsAreGatheredOnePerPartition() {
    Random rnd = seededRandom();
    OracleStateMachine o = twoSplitCommunities();
    Runnable workload = () -> {
      for (int i = 0; i < 20; i++) {
        long[] pair = communityPair(rnd);
        if (pair != null) {
          consult(o, pair[0], pair[1]);
        }
      }
    };
    // A plan from the first few consults may be partial (worth moving, yet leaving a pair apart),
    // and the two communities are symmetric, so a later plan may swap their partitions: wait for
    // a plan that gathers both, and check the consults against one plan (again if a new one came
    // in while checking).
    for (int attempt = 1; ; attempt++) {
      feedUntil(workload, () -> gathersTheTwoCommunitiesApart(o, plan(o)), "a plan that gathers each community");
      PlacementPlanner.Plan checked = plan(o);
      GroupId first = consult(o, 1, 2);
      GroupId second = consult(o, 7, 8);
      java.util.List<String> wrong = new java.util.ArrayList<>();
      if (first == null || second == null || first.equals(second)) {
        wrong.add("the two communities go to different partitions (balance): " + first + ", " + second);
      }
      for (long a = 1; a <= 6; a++) {
        for (long b = a + 1; b <= 6; b++) {
          GroupId one = consult(o, a, b);
          GroupId two = consult(o, a + 6, b + 6);
          if (!java.util.Objects.equals(first, one)) {
            wrong.add("community 1, objects " + a + " and " + b + ": " + one + ", not " + first);
          }
          if (!java.util.Objects.equals(second, two)) {
            wrong.add("community 2, objects " + (a + 6) + " and " + (b + 6) + ": " + two + ", not " + second);
          }
        }
      }
      if (plan(o) == checked) {
        assertTrue(wrong.isEmpty(), "the consults follow the plan " + checked + ": " + wrong);
        return;
      }
      if (attempt == 5) {
        fail("a new plan came in during each of 5 checks");
      }
    }
  }

  /** True if {@code p} gathers objects 1-6 in one partition and 7-12 in another. */
  private static boolean gathersTheTwoCommunitiesApart(OracleStateMachine o, PlacementPlanner.Plan p) {
    if (p == null || !p.worthMoving()) {
      return false;
    }
    return apart(o, p.placement());
  }

  @Test
  void withoutLocalityTheOracleAnswersNoTargetSoTheClientRunsSsmr() {
    Random rnd = seededRandom();
    OracleStateMachine o = graphOracle();
    int n = 60;
    for (long id = 1; id <= n; id++) {
      create(o, id, id % 2 == 0 ? P0 : P1);
    }
    Runnable workload = () -> {
      for (int i = 0; i < 50; i++) {
        long a = 1 + rnd.nextInt(n);
        long b = 1 + rnd.nextInt(n);
        if (a != b) {
          consult(o, a, b);
        }
      }
    };
    feedUntil(workload, () -> serverOf(o).graphPlacement().plansComputed() >= 3, "three plans of the random workload");
    PlacementPlanner.Plan p = plan(o);
    assertTrue(!p.worthMoving(), "uniform pairs have no locality: " + p);
    assertNull(consult(o, 1, 2), "no target: objects 1 (p1) and 2 (p0) stay where they are");
  }

  /**
   * Partitions report samples of the commands they ran alone (no consult sees those): fed only
   * such samples, the oracle learns the communities and its plan gathers them.
   */
  @Test
  void samplesOfSinglePartitionCommandsFeedThePlanWithoutAnyConsult() {
    Random rnd = seededRandom();
    OracleStateMachine o = twoSplitCommunities();
    Runnable reports = () -> {
      java.util.ArrayList<long[]> accesses = new java.util.ArrayList<>();
      for (int i = 0; i < 10; i++) {
        long[] pair = communityPair(rnd);
        if (pair != null) {
          accesses.add(pair);
        }
      }
      assertEquals(accesses.size(), o.query(new Observed(accesses, 4)));
      o.query(new PlanReq(0)); // as the rebalancer does once every partition's samples are in
    };
    // A plan from a first few samples may be partial; the samples keep coming, as they do
    // from a rebalancer, until the plan gathers each community in one partition.
    feedUntil(reports, () -> plan(o) != null && plan(o).worthMoving() && twoCommunitiesApart(o),
        "a plan from the samples alone that gathers each community");
  }

  /** True if the plan (and the map, for objects it leaves) keeps 1-6 together, 7-12 together, apart. */
  private static boolean twoCommunitiesApart(OracleStateMachine o) {
    PlanMoves moves = (PlanMoves) o.query(new PlanReq(100));
    return apart(o, moves.to());
  }

  /**
   * True if objects 1-6 are in one partition and 7-12 in another, each where {@code planned}
   * puts it or, if it does not name it, where the oracle's map has it.
   */
  private static boolean apart(OracleStateMachine o, java.util.Map<ObjId, GroupId> planned) {
    java.util.Map<Long, GroupId> at = new java.util.TreeMap<>();
    for (long id = 1; id <= 12; id++) {
      at.put(id, planned.getOrDefault(ObjId.valueOf(id), o.locationOf(ObjId.valueOf(id))));
    }
    for (long id = 2; id <= 6; id++) {
      if (!at.get(1L).equals(at.get(id)) || !at.get(7L).equals(at.get(id + 6))) {
        return false;
      }
    }
    return !at.get(1L).equals(at.get(7L));
  }

  @Test
  void thePapersRuleIsTheDefault() {
    OracleStateMachine o = new OracleStateMachine();
    o.init(TestGroups.ORACLE, OracleServerFixture.CLUSTER, codec);
    assertEquals(OracleStateMachine.Placement.PAPER, o.placement());
    assertNull(serverOf(o).graphPlacement());
    create(o, 1, P0);
    create(o, 2, P0);
    create(o, 3, P1);
    Prophecy p = (Prophecy) o.query(new ConsultReq(Command.access("op", ObjId.valueOf(1), ObjId.valueOf(2),
        ObjId.valueOf(3))));
    assertEquals(P0, p.target(), "where most of them are");
  }
}
