package io.eyrie.core;

import static io.eyrie.multicast.testing.TestGroups.ORACLE;
import static io.eyrie.multicast.testing.TestGroups.P0;
import static io.eyrie.multicast.testing.TestGroups.P1;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.internal.AccessSampler;
import io.eyrie.core.protocol.AccessReq;
import io.eyrie.core.protocol.Begun;
import io.eyrie.core.protocol.CoreReply;
import io.eyrie.core.protocol.CreateReq;
import io.eyrie.core.protocol.DeleteReq;
import io.eyrie.core.protocol.MoveReq;
import io.eyrie.core.protocol.Observed;
import io.eyrie.core.protocol.PartitionChange;
import io.eyrie.core.protocol.PartitionStatsReply;
import io.eyrie.core.protocol.ReadReq;
import io.eyrie.core.protocol.SamplesReq;
import io.eyrie.core.protocol.SsmrReq;
import io.eyrie.core.protocol.StatsReq;
import io.eyrie.core.protocol.Values;
import io.eyrie.core.protocol.Verdict;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.testing.FakeExecutionContext;
import io.eyrie.multicast.testing.TestGroups;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The partition server's protocol (Algorithms 1 and 3) driven step by step through a fake
 * execution context: no cluster, no Ratis, deterministic.
 */
@Timeout(10)
class PartitionServerTest {
  static final ClusterConfig CLUSTER = TestGroups.oneNode(2);

  /** A counter object. */
  static final class Counter extends PRObject {
    long value;
    Object junk;

    private Counter() {}

    Counter(ObjId id, long value) {
      super(id);
      this.value = value;
    }
  }

  /** An object whose class has no no-argument constructor: it encodes, but cannot be decoded. */
  static final class NoDefault extends PRObject {
    NoDefault(ObjId id, long ignored) {
      super(id);
    }
  }

  /** Adds to the target counter; replies the sum of every counter the command names. */
  record Add(long amount) {}

  /** Asks for one more object. */
  record Widen(long extra) {}

  /** Answers whether the application can see another object. */
  record Peek(long other) {}

  /**
   * Adds to every counter of the command, then fails as told: throws, asks for another object,
   * or stores an unregistered value in the last counter; or (NONE) succeeds.
   */
  record AddAllThen(long amount, String fail) {}

  /** Replies the sum of the command's counters and changes nothing; or throws, if told to. */
  record Sum(boolean fail) {
    Sum() {
      this(false);
    }
  }

  /** The counter server with its own copies for rollback (counted), and no check after commands. */
  static final class CopyingCounterServer extends CounterServer {
    int copies;

    @Override
    protected boolean checkObjectsAfterCommands() {
      return false;
    }

    @Override
    protected PRObject copyForRollback(PRObject object) {
      copies++;
      Counter c = (Counter) object;
      return new Counter(c.getId(), c.value);
    }
  }

  static class CounterServer extends StateMachine {
    final List<ObjId> deleted = new java.util.ArrayList<>();

    @Override
    protected Object executeCommand(Command c) {
      if (c.op() instanceof Sum m) {
        long sum = 0;
        for (ObjId id : c.objects()) {
          sum += ((Counter) getObject(id)).value;
        }
        if (m.fail()) {
          throw new IllegalStateException("told to fail");
        }
        return sum;
      }
      if (c.op() instanceof AddAllThen a) {
        Counter last = null;
        for (ObjId id : c.objects()) {
          last = (Counter) getObject(id);
          last.value += a.amount();
        }
        switch (a.fail()) {
          case "throw" -> throw new IllegalStateException("failed after writing");
          case "retry" -> {
            return retry(List.of(ObjId.valueOf(99)));
          }
          case "spoil" -> last.junk = new AtomicLong();
          default -> { }
        }
        return "done";
      }
      if (c.op() instanceof Peek k) {
        return getObject(ObjId.valueOf(k.other())) != null;
      }
      if (c.op() instanceof Widen w) {
        return c.objects().contains(ObjId.valueOf(w.extra())) ? "wide" : retry(List.of(ObjId.valueOf(w.extra())));
      }
      ((Counter) getObject(c.target())).value += ((Add) c.op()).amount();
      long sum = 0;
      for (ObjId id : c.objects()) {
        sum += ((Counter) getObject(id)).value;
      }
      return sum;
    }

    @Override
    protected PRObject createObject(Command c) {
      if ((Long) c.op() == 13L) {
        throw new IllegalArgumentException("13 is unlucky");
      }
      if ((Long) c.op() == 15L) {
        return new NoDefault(c.target(), 15);
      }
      if ((Long) c.op() == 14L) {
        return new Counter(ObjId.valueOf(c.target().value() + 1), 14);
      }
      Counter n = new Counter(c.target(), (Long) c.op());
      if (n.value < 0) {
        n.junk = new AtomicLong(); // unregistered: cannot be encoded
      }
      return n;
    }

    @Override
    protected void objectDeleted(PRObject object, Command delete) {
      deleted.add(object.getId());
      if (((Counter) object).value == 7) {
        throw new IllegalStateException("cannot clean up after 7");
      }
    }
  }

  final Codec codec = new Codec(Eyrie.registry().toBuilder().register(100, Counter.class).register(101, Add.class)
      .register(102, Widen.class).register(103, Peek.class).register(104, Sum.class).register(105, AddAllThen.class).register(106, NoDefault.class).build());

  PartitionServer server(GroupId g) {
    return new PartitionServer(new CounterServer(), g, CLUSTER, codec);
  }

  /** A server at {@code g} holding counters 1, 2, ... with these values, each created through the oracle ({@link #create}). */
  PartitionServer server(GroupId g, long... values) {
    PartitionServer s = server(g);
    for (int i = 0; i < values.length; i++) {
      create(s, g, i + 1, values[i]);
    }
    return s;
  }

  FakeExecutionContext ctx(GroupId at, Object payload, GroupId reply, GroupId... dests) {
    return new FakeExecutionContext(codec, at, payload, reply, dests);
  }

  static ObjId id(long v) {
    return ObjId.valueOf(v);
  }

  /** Creates an object at a partition, playing the oracle's part (Begun, then an OK verdict). */
  void create(PartitionServer s, GroupId at, long id, long value) {
    CreateReq req = new CreateReq(Command.create(id(id), value), at);
    FakeExecutionContext c = ctx(at, req, at, ORACLE, at);
    Execution e = s.deliver(c);
    assertEquals(java.util.Set.of(ORACLE), e.awaited(), "a create waits for the oracle");
    assertEquals(List.of(new FakeExecutionContext.Sent(ORACLE, new Begun(at))), c.sent(),
        "the partition tells the oracle it has begun the create (execution atomicity)");
    c.receive(ORACLE, new Verdict(Verdict.Status.OK, at));
    assertEquals(CoreReply.Status.OK, ((CoreReply) s.resume(c).replyValue()).status());
  }

  @Test
  void accessExecutesLocallyAndRetriesWhenAnObjectIsElsewhere() {
    PartitionServer s = server(P0, 10);
    Execution e = s.deliver(ctx(P0, new AccessReq(Command.access(new Add(5), id(1))), P0, P0));
    assertEquals(15L, ((CoreReply) e.replyValue()).value());
    Execution miss = s.deliver(ctx(P0, new AccessReq(Command.access(new Add(5), id(1), id(2))), P0, P0));
    assertEquals(CoreReply.Status.RETRY, ((CoreReply) miss.replyValue()).status(), "object 2 is not here: the proxy must retry");
    assertEquals(15L, ((Counter) s.object(id(1))).value, "the retried command changed nothing");
  }

  @Test
  void multiObjectCommandsRunAloneAreSampledForThePlacementAndHandedOverOnce() {
    PartitionServer s = server(P0, 0, 0);
    for (int i = 0; i < 4 * AccessSampler.SAMPLE_EVERY; i++) {
      s.deliver(ctx(P0, new AccessReq(Command.access(new Add(1), id(1), id(2))), P0, P0));
      s.deliver(ctx(P0, new AccessReq(Command.access(new Add(1), id(1))), P0, P0)); // one object: no edge
    }
    Observed o = (Observed) s.query(new SamplesReq());
    assertEquals(4, o.accesses().size(), "one in " + AccessSampler.SAMPLE_EVERY + " of the two-object commands");
    assertArrayEquals(new long[] {1, 2}, o.accesses().get(0));
    assertEquals(AccessSampler.SAMPLE_EVERY, o.weight(), "each sample stands for that many commands");
    assertTrue(((Observed) s.query(new SamplesReq())).accesses().isEmpty(), "handed over once");
  }

  @Test
  void applicationRetryCarriesTheExtraObjects() {
    PartitionServer s = server(P0, 0);
    CoreReply r = (CoreReply) s.deliver(ctx(P0, new AccessReq(Command.access(new Widen(7), id(1))), P0, P0))
        .replyValue();
    assertEquals(CoreReply.Status.RETRY, r.status());
    assertArrayEquals(new ObjId[] {id(7)}, r.extra());
  }

  @Test
  void moveShipsTheValuesAndTheDestinationInstallsThem() {
    PartitionServer src = server(P0);
    PartitionServer dst = server(P1);
    create(src, P0, 1, 10);
    MoveReq m = new MoveReq(new ObjId[] {id(1)}, P0, P1);
    FakeExecutionContext atSrc = ctx(P0, m, P1, ORACLE, P0, P1);
    assertEquals(CoreReply.Status.OK, ((CoreReply) src.deliver(atSrc).replyValue()).status());
    assertFalse(src.localIds().contains(id(1)), "the source gave the object up");
    FakeExecutionContext atDst = ctx(P1, m, P1, ORACLE, P0, P1);
    assertEquals(java.util.Set.of(P0), dst.deliver(atDst).awaited(), "the destination waits for the values");
    atSrc.forwardTo(atDst);
    assertEquals(CoreReply.Status.OK, ((CoreReply) dst.resume(atDst).replyValue()).status());
    assertEquals(10L, ((Counter) dst.object(id(1))).value);
    assertEquals(List.of(new FakeExecutionContext.Sent(ORACLE, new Begun(P1))), atDst.sent(),
        "the destination tells the oracle it has the objects, so that its map follows");
  }

  /**
   * A partition learns from each partition change the table the oracle leaves; a move into a
   * retired partition does not ship (so a drained partition stays empty), and a move delivered
   * while the change waits for the oracle's table waits for it.
   */
  @Test
  void noMoveShipsIntoARetiredPartition() {
    PartitionServer src = server(P0, 10, 20);
    FakeExecutionContext change = ctx(P0, new PartitionChange(P1, false), ORACLE, ORACLE, P0, P1);
    assertEquals(java.util.Set.of(ORACLE), src.deliver(change).awaited(), "waits for the oracle's table");
    MoveReq m = new MoveReq(new ObjId[] {id(1)}, P0, P1);
    FakeExecutionContext blocked = ctx(P0, m, P1, ORACLE, P0, P1);
    assertTrue(src.deliver(blocked).isBlocked(), "a move out waits for the table");
    // It claims its object meanwhile: a delete of it delivered after it waits behind it (else
    // the delete would hold the object the move needs, while the oracle's chain puts the move first).
    FakeExecutionContext del = ctx(P0, new DeleteReq(Command.delete(id(1), null), P0), P0, ORACLE, P0);
    assertTrue(src.deliver(del).isBlocked(), "the delete keeps its place behind the move");
    TreeMap<GroupId, PartitionTable.State> states = new TreeMap<>();
    states.put(P0, PartitionTable.State.ACTIVE);
    states.put(P1, PartitionTable.State.RETIRED);
    change.receive(ORACLE, new PartitionTable(states, new TreeMap<>()));
    assertFalse(src.resume(change).isError());
    Execution e = src.deliver(blocked);
    assertTrue(e.isError() && e.errorMessage().contains("retired"), String.valueOf(e.errorMessage()));
    assertTrue(src.localIds().contains(id(1)), "the object stays");
    Values v = (Values) blocked.sent().get(0).item();
    assertTrue(v.error() != null && blocked.sent().get(0).to().equals(P1), "the destination is told, not left waiting");
    // The destination answers the client RETRY, not an error: the consult that chose it came
    // before the retirement, so the client asks the oracle again (the command does not fail).
    PartitionServer dst = server(P1);
    FakeExecutionContext atDst = ctx(P1, m, P1, ORACLE, P0, P1);
    assertEquals(java.util.Set.of(P0), dst.deliver(atDst).awaited());
    blocked.forwardTo(atDst);
    Execution answered = dst.resume(atDst);
    assertFalse(answered.isError(), String.valueOf(answered.errorMessage()));
    assertEquals(CoreReply.Status.RETRY, ((CoreReply) answered.replyValue()).status());
    assertTrue(dst.localIds().isEmpty(), "nothing arrived");
    Begun told = (Begun) atDst.sent().get(0).item();
    assertTrue(told.refusal() != null && told.refusal().contains("retired"), "the oracle's map stays: " + told);
    // A replica restored from a snapshot knows the table too.
    PartitionServer restored = server(P0);
    restored.restore(src.snapshot());
    FakeExecutionContext other = ctx(P0, new MoveReq(new ObjId[] {id(2)}, P0, P1), P1, ORACLE, P0, P1);
    Execution r = restored.deliver(other);
    assertTrue(r.isError() && r.errorMessage().contains("retired"), String.valueOf(r.errorMessage()));
  }


  /**
   * A partition change or a create that another destination abandoned (a reused message id)
   * ends cleanly here: moves out are no longer held back, and the create is refused, its object
   * dropped.
   */
  @Test
  void anAbandonedPartitionChangeOrCreateEndsCleanly() {
    PartitionServer s = server(P0, 10);
    FakeExecutionContext change = ctx(P0, new PartitionChange(P1, false), ORACLE, ORACLE, P0, P1);
    s.deliver(change);
    change.abandon(ORACLE);
    assertFalse(s.resume(change).isError());
    FakeExecutionContext move = ctx(P0, new MoveReq(new ObjId[] {id(1)}, P0, P1), P1, ORACLE, P0, P1);
    assertEquals(CoreReply.Status.OK, ((CoreReply) s.deliver(move).replyValue()).status(), "moves out are not held back");

    FakeExecutionContext c = ctx(P0, new CreateReq(Command.create(id(5), 3L), P0), P0, ORACLE, P0);
    s.deliver(c);
    c.abandon(ORACLE);
    CoreReply r = (CoreReply) s.resume(c).replyValue();
    assertEquals(CoreReply.Status.REFUSED, r.status(), String.valueOf(r.value()));
    assertNull(s.object(id(5)));
    create(s, P0, 5, 4);
    assertEquals(4, ((Counter) s.object(id(5))).value, "a later create of it is made afresh");
  }

  @Test
  void ssmrCommandSeesRemoteCopiesAndWritesOnlyItsOwnObjects() {
    PartitionServer a = server(P0);
    PartitionServer b = server(P1);
    create(a, P0, 1, 10);
    create(b, P1, 2, 20);
    SsmrReq req = new SsmrReq(Command.access(new Add(1), id(1), id(2)));
    FakeExecutionContext ca = ctx(P0, req, P0, P0, P1);
    FakeExecutionContext cb = ctx(P1, req, P0, P0, P1);
    assertTrue(a.deliver(ca).isResumeLater(), "waits off the queue");
    assertTrue(b.deliver(cb).isResumeLater());
    ca.forwardTo(cb);
    cb.forwardTo(ca);
    assertEquals(31L, ((CoreReply) a.resume(ca).replyValue()).value(), "11 + 20");
    assertEquals(31L, ((CoreReply) b.resume(cb).replyValue()).value(), "both partitions compute the same reply");
    assertEquals(11L, ((Counter) a.object(id(1))).value, "P0 owns the target: the write sticks");
    assertEquals(20L, ((Counter) b.object(id(2))).value, "P1's object is untouched");
    assertNull(b.object(id(1)), "the copy of a remote object is not kept");
  }

  /**
   * A command that waits for another group holds its objects: later commands on them are blocked
   * (without sending anything) until it finishes, in delivery order, while commands on other
   * objects run; what is held and what waits survives a snapshot (a new leader).
   */
  @Test
  void commandsOnTheObjectsOfAWaitingCommandWaitForItAndOthersRun() {
    PartitionServer s = server(P0, 10, 20);
    SsmrReq req = new SsmrReq(Command.access(new Add(1), id(1), id(9)));
    FakeExecutionContext z = ctx(P0, req, P0, P0, P1);
    assertEquals(java.util.Set.of(P1), s.deliver(z).awaited());
    FakeExecutionContext other = ctx(P0, new AccessReq(Command.access(new Add(5), id(2))), P0, P0);
    assertEquals(25L, ((CoreReply) s.deliver(other).replyValue()).value(), "object 2 is not held");
    FakeExecutionContext a = ctx(P0, new AccessReq(Command.access(new Add(100), id(1))), P0, P0);
    assertTrue(s.deliver(a).isBlocked(), "object 1 is held by the S-SMR access");
    assertEquals(List.of(), a.sent());
    FakeExecutionContext b = ctx(P0, new AccessReq(Command.access(new Add(1000), id(2), id(1))), P0, P0);
    assertTrue(s.deliver(b).isBlocked());
    FakeExecutionContext c = ctx(P0, new AccessReq(Command.access(new Add(1), id(2))), P0, P0);
    assertTrue(s.deliver(c).isBlocked(), "object 2 is claimed by b, delivered before c");
    FakeExecutionContext mv = ctx(P0, new MoveReq(new ObjId[] {id(9)}, P0, P1), P1, ORACLE, P0, P1);
    assertTrue(s.deliver(mv).isBlocked(), "a move of a held object, absent here, waits too");

    PartitionServer t = server(P0);
    t.restore(s.snapshot());
    for (PartitionServer x : List.of(s, t)) {
      assertTrue(x.deliver(b).isBlocked(), "b still waits");
      assertTrue(x.deliver(c).isBlocked(), "c still waits behind b");
    }
    TreeMap<ObjId, PRObject> nine = new TreeMap<>();
    nine.put(id(9), new Counter(id(9), 0));
    z.receive(P1, Values.of(nine));
    for (PartitionServer x : List.of(s, t)) {
      assertEquals(11L, ((CoreReply) x.resume(z).replyValue()).value(), "11 + 0");
      assertEquals(111L, ((CoreReply) x.deliver(a).replyValue()).value(), "a runs after the access");
      assertEquals(1136L, ((CoreReply) x.deliver(b).replyValue()).value(), "then b: 1111 + 25");
      assertEquals(26L, ((CoreReply) x.deliver(c).replyValue()).value(), "then c");
    }
  }

  static CoreReply read(PartitionServer s, Object op, long... ids) {
    ObjId[] objs = java.util.Arrays.stream(ids).mapToObj(ObjId::valueOf).toArray(ObjId[]::new);
    return (CoreReply) s.query(new ReadReq(Command.access(op, objs)));
  }

  /**
   * A read off the log is served only where delivering the command now would execute it at once:
   * never while a command in progress holds one of its objects, or a blocked command waits for
   * one; then it answers BUSY (the client sends it through the log). It changes nothing
   * replicated, and a missing object or the application's call for more objects is a RETRY, as
   * through the log.
   */
  @Test
  void aReadIsServedOffTheLogOnlyWhenNoCommandHereHoldsOrAwaitsItsObjects() {
    PartitionServer s = server(P0, 10, 20, 30);
    byte[] before = s.snapshot();
    assertEquals(30L, read(s, new Sum(), 1, 2).value());
    assertArrayEquals(before, s.snapshot(), "a read changes nothing replicated, not even the counters");
    assertEquals(CoreReply.Status.RETRY, read(s, new Sum(), 1, 7).status(), "object 7 is not here");
    assertArrayEquals(new ObjId[] {id(7)}, read(s, new Widen(7), 1).extra(), "the application asks for more");
    assertEquals(false, read(s, new Peek(2), 1).value(), "a read sees only its declared objects, as through the log");

    FakeExecutionContext z = ctx(P0, new SsmrReq(Command.access(new Add(1), id(1), id(9))), P0, P0, P1);
    assertEquals(java.util.Set.of(P1), s.deliver(z).awaited());
    assertEquals(CoreReply.Status.BUSY, read(s, new Sum(), 1).status(), "object 1 is held by the waiting S-SMR access");
    assertEquals(CoreReply.Status.BUSY, read(s, new Sum(), 9).status(), "so is 9, absent here: busy, not a retry");
    assertEquals(20L, read(s, new Sum(), 2).value(), "object 2 is free");
    FakeExecutionContext b = ctx(P0, new AccessReq(Command.access(new Add(100), id(2), id(1))), P0, P0);
    assertTrue(s.deliver(b).isBlocked());
    assertEquals(CoreReply.Status.BUSY, read(s, new Sum(), 2).status(), "object 2 is claimed by the blocked b");
    assertEquals(30L, read(s, new Sum(), 3).value());

    TreeMap<ObjId, PRObject> nine = new TreeMap<>();
    nine.put(id(9), new Counter(id(9), 0));
    z.receive(P1, Values.of(nine));
    assertEquals(11L, ((CoreReply) s.resume(z).replyValue()).value());
    assertEquals(CoreReply.Status.BUSY, read(s, new Sum(), 1).status(), "no longer held, but b, delivered before, waits for 1");
    assertEquals(131L, ((CoreReply) s.deliver(b).replyValue()).value(), "b runs: 120 + 11");
    assertEquals(131L, read(s, new Sum(), 1, 2).value(), "the read sees the access and b");

    assertEquals(CoreReply.Status.BUSY, read(s, new Sum(true), 3).status(), "the application failed: the log reports it");
    assertEquals(CoreReply.Status.BUSY, ((CoreReply) s.query(new ReadReq(Command.delete(id(1), null)))).status(),
        "only an access is read");
  }

  /** An application sees only the objects its command declares, even those held here. */
  @Test
  void getObjectSeesOnlyTheCommandsObjects() {
    PartitionServer s = server(P0, 10, 20);
    assertEquals(Boolean.TRUE, ((CoreReply) s.deliver(ctx(P0, new AccessReq(
        Command.access(new Peek(2), id(1), id(2))), P0, P0)).replyValue()).value());
    assertEquals(Boolean.FALSE, ((CoreReply) s.deliver(ctx(P0, new AccessReq(
        Command.access(new Peek(2), id(1))), P0, P0)).replyValue()).value(), "object 2 is not declared");
  }

  @Test
  void createAndDeleteFollowTheOraclesVerdict() {
    PartitionServer s = server(P0);
    CreateReq req = new CreateReq(Command.create(id(3), 1L), P0);
    FakeExecutionContext c = ctx(P0, req, P0, ORACLE, P0);
    s.deliver(c);
    c.receive(ORACLE, new Verdict(Verdict.Status.NOK, P1));
    assertEquals(CoreReply.Status.EXISTS, ((CoreReply) s.resume(c).replyValue()).status(), "the oracle knows it elsewhere");
    assertNull(s.object(id(3)));

    create(s, P0, 3, 1);
    DeleteReq del = new DeleteReq(Command.delete(id(3), null), P0);
    FakeExecutionContext d = ctx(P0, del, P0, ORACLE, P0);
    assertTrue(s.deliver(d).isResumeLater(), "waits for the verdict off the queue, holding the object");
    assertEquals(List.of(new FakeExecutionContext.Sent(ORACLE, new Begun(P0))), d.sent());
    d.receive(ORACLE, new Verdict(Verdict.Status.OK, P0));
    assertEquals(CoreReply.Status.OK, ((CoreReply) s.resume(d).replyValue()).status());
    assertNull(s.object(id(3)));
    assertEquals(List.of(id(3)), ((CounterServer) s.app()).deleted, "the delete hook saw the object");

    FakeExecutionContext again = ctx(P0, del, P0, ORACLE, P0);
    s.deliver(again);
    again.receive(ORACLE, new Verdict(Verdict.Status.NOK, null));
    CoreReply r = (CoreReply) s.resume(again).replyValue();
    assertEquals(CoreReply.Status.NOT_FOUND, r.status(), "deleting an absent object says so");
    assertArrayEquals(new ObjId[] {id(3)}, r.extra(), "and names it");
  }

  /**
   * A create whose object the application cannot make (it throws, returns another id, or an
   * object that cannot be encoded) tells the oracle so in Begun, before the oracle decides; the
   * oracle refuses, and nothing is created.
   */
  @Test
  void aCreateTheApplicationCannotMakeIsReportedInBegunAndNothingIsCreated() {
    for (long bad : new long[] {-1L, 13L, 14L, 15L}) {
      PartitionServer s = server(P0);
      long id = 4;
      FakeExecutionContext c = ctx(P0, new CreateReq(Command.create(id(id), bad), P0), P0, ORACLE, P0);
      assertTrue(s.deliver(c).isResumeLater(), "it still waits for the oracle's verdict");
      Begun b = (Begun) c.sent().get(0).item();
      assertTrue(b.refusal() != null, "value " + bad + ": the refusal goes with Begun");
      assertTrue(b.refusal().contains(bad == -1L ? "cannot be encoded" : bad == 13L ? "unlucky" : bad == 14L ? "id #5"
          : "cannot be decoded"), b.refusal());
      c.receive(ORACLE, new Verdict(Verdict.Status.REFUSED, null, b.refusal()));
      CoreReply r = (CoreReply) s.resume(c).replyValue();
      assertEquals(CoreReply.Status.REFUSED, r.status());
      assertTrue(String.valueOf(r.value()).contains("nothing changed"), String.valueOf(r.value()));
      assertNull(s.object(id(id)), "an object that could never be moved or snapshotted is not kept");
      assertTrue(s.object(id(id + 1)) == null);
      // A later create of the same id that works is made afresh.
      create(s, P0, id, 2);
      assertEquals(2, ((Counter) s.object(id(id))).value);
    }
    // An S-SMR create is made at every destination partition: each reports the same.
    PartitionServer s = server(P1);
    FakeExecutionContext c = ctx(P1, new SsmrReq(Command.create(id(8), 13L)), P0, ORACLE, P0, P1);
    s.deliver(c);
    assertTrue(((Begun) c.sent().get(0).item()).refusal().contains("unlucky"));
  }

  @Test
  void aPreparedCreateSurvivesASnapshotAndIsInstalledByTheVerdict() {
    PartitionServer s = server(P0);
    FakeExecutionContext c = ctx(P0, new CreateReq(Command.create(id(6), 5L), P0), P0, ORACLE, P0);
    s.deliver(c);
    PartitionServer r = server(P0);
    r.restore(s.snapshot());
    c.receive(ORACLE, new Verdict(Verdict.Status.OK, P0));
    assertEquals(CoreReply.Status.OK, ((CoreReply) r.resume(c).replyValue()).status());
    assertEquals(5, ((Counter) r.object(id(6))).value, "the object made when the create started");
  }

  /**
   * A command that writes and then fails changes nothing: it throws, it asks for more objects,
   * or it leaves an object that can no longer be encoded. Its error or RETRY reply is then true.
   */
  @Test
  void aCommandThatFailsAfterWritingChangesNothing() {
    PartitionServer s = server(P0, 10, 20);
    for (String fail : new String[] {"throw", "retry", "spoil"}) {
      FakeExecutionContext c = ctx(P0, new AccessReq(Command.access(new AddAllThen(5, fail), id(1), id(2))), P0, P0);
      if (fail.equals("retry")) {
        assertEquals(CoreReply.Status.RETRY, ((CoreReply) s.deliver(c).replyValue()).status());
      } else {
        RuntimeException e = org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class, () -> s.deliver(c),
            fail + ": the failure reaches the queue, which answers an error");
        assertTrue(!fail.equals("spoil") || e.getMessage().contains("changed nothing"), e.getMessage());
      }
      assertEquals(10, ((Counter) s.object(id(1))).value, fail + ": the first write is undone");
      assertEquals(20, ((Counter) s.object(id(2))).value, fail + ": the second write is undone");
      assertNull(((Counter) s.object(id(2))).junk, fail);
    }
    FakeExecutionContext ok = ctx(P0, new AccessReq(Command.access(new AddAllThen(5, "none"), id(1), id(2))), P0, P0);
    assertEquals("done", ((CoreReply) s.deliver(ok).replyValue()).value());
    assertEquals(15, ((Counter) s.object(id(1))).value, "a command that succeeds keeps its writes");
    assertEquals(25, ((Counter) s.object(id(2))).value);
    // The snapshot still encodes (nothing unencodable was kept).
    server(P0).restore(s.snapshot());
  }

  @Test
  void theApplicationsOwnCopyIsWhatAFailedCommandPutsBack() {
    CopyingCounterServer app = new CopyingCounterServer();
    PartitionServer s = new PartitionServer(app, P0, CLUSTER, codec);
    create(s, P0, 1, 10);
    create(s, P0, 2, 20);
    FakeExecutionContext c = ctx(P0, new AccessReq(Command.access(new AddAllThen(5, "throw"), id(1), id(2))), P0, P0);
    org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, () -> s.deliver(c));
    assertEquals(2, app.copies, "one copy per local object, the application's");
    assertEquals(10, ((Counter) s.object(id(1))).value);
    assertEquals(20, ((Counter) s.object(id(2))).value);
    // Without the check, a command that spoils an object keeps its writes; the object then
    // cannot travel: its move fails and it stays.
    FakeExecutionContext spoil = ctx(P0, new AccessReq(Command.access(new AddAllThen(1, "spoil"), id(1))), P0, P0);
    assertEquals("done", ((CoreReply) s.deliver(spoil).replyValue()).value());
    FakeExecutionContext move = ctx(P0, new MoveReq(new ObjId[] {id(1)}, P0, P1), P1, ORACLE, P0, P1);
    assertTrue(s.deliver(move).isError());
    assertTrue(s.localIds().contains(id(1)), "the object stays");
  }

  @Test
  void anSsmrCommandThatThrowsRollsBackItsLocalObjectsAtEveryPartition() {
    PartitionServer s0 = server(P0);
    PartitionServer s1 = server(P1);
    create(s0, P0, 1, 10);
    create(s1, P1, 2, 20);
    SsmrReq req = new SsmrReq(Command.access(new AddAllThen(5, "throw"), id(1), id(2)));
    FakeExecutionContext c0 = ctx(P0, req, P0, P0, P1);
    FakeExecutionContext c1 = ctx(P1, req, P0, P0, P1);
    s0.deliver(c0);
    s1.deliver(c1);
    c0.forwardTo(c1);
    c1.forwardTo(c0);
    org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, () -> s0.resume(c0));
    org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, () -> s1.resume(c1));
    assertEquals(10, ((Counter) s0.object(id(1))).value);
    assertEquals(20, ((Counter) s1.object(id(2))).value);
  }

  @Test
  void aDeleteWhoseHookThrowsStillTookEffectAndSaysSo() {
    PartitionServer s = server(P0);
    create(s, P0, 3, 7);
    FakeExecutionContext d = ctx(P0, new DeleteReq(Command.delete(id(3), null), P0), P0, ORACLE, P0);
    s.deliver(d);
    d.receive(ORACLE, new Verdict(Verdict.Status.OK, P0));
    assertEquals(CoreReply.Status.OK, ((CoreReply) s.resume(d).replyValue()).status(), "the oracle forgot it; so did we");
    assertNull(s.object(id(3)));
  }

  /**
   * The application reaches objects only through {@code getObject}, which answers only the
   * command's declared objects (docs/design.md 6 relies on it); no hook lists the partition's
   * other objects (review N7: {@code localObjects()} did, so a command could observe moves and
   * creates of objects it did not declare, in an order no linearization explains).
   */
  @Test
  void theApplicationSeesNoObjectItsCommandDidNotDeclare() {
    java.util.TreeSet<String> reachable = new java.util.TreeSet<>();
    for (java.lang.reflect.Method m : StateMachine.class.getDeclaredMethods()) {
      int mod = m.getModifiers();
      if (java.lang.reflect.Modifier.isPublic(mod) || java.lang.reflect.Modifier.isProtected(mod)) {
        reachable.add(m.getName());
      }
    }
    assertEquals(new java.util.TreeSet<>(List.of("executeCommand", "createObject", "objectDeleted",
        "copyForPartitions", "copyForRollback", "checkObjectsAfterCommands", "getObject", "retry", "partition")),
        reachable,
        "what a StateMachine can call or override; a new way to reach objects must keep to the declared set");
  }

  @Test
  void aMalformedMessageIsAnErrorAtEveryDestination() {
    PartitionServer s = server(P0);
    Execution e = s.deliver(ctx(P0, new MoveReq(new ObjId[] {id(1)}, P0, P0), P0, ORACLE, P0));
    assertTrue(e.isError(), "a move from a partition to itself would drop the objects");
  }

  @Test
  void snapshotRestoresObjectsAndCounters() {
    PartitionServer s = server(P0, 10, 20);
    byte[] snap = s.snapshot();
    PartitionServer t = server(P0);
    t.restore(snap);
    assertEquals(List.of(id(1), id(2)), List.copyOf(t.localIds()));
    assertEquals(20L, ((Counter) t.object(id(2))).value);
    assertArrayEquals(snap, t.snapshot(), "the restored replica snapshots identically");
    t.restore(new byte[0]);
    assertTrue(t.localIds().isEmpty());
    TreeMap<ObjId, PRObject> none = new TreeMap<>();
    assertEquals(none.keySet(), t.localIds());
  }

  /**
   * A partition with every part of its replicated state in use: objects, counters, an S-SMR
   * access holding its objects, commands blocked behind it, a create waiting for its verdict
   * (its object made), a retired partition, and a partition change waiting for its table.
   */
  PartitionServer populated() {
    PartitionServer s = server(P0, 10, 20, 30);
    s.deliver(ctx(P0, new AccessReq(Command.access(new Add(1), id(1), id(7))), P0, P0)); // a retry
    s.deliver(ctx(P0, new AccessReq(Command.access(new Widen(7), id(1))), P0, P0)); // the application's retry
    PartitionServer p1 = server(P1);
    create(p1, P1, 4, 40);
    SsmrReq both = new SsmrReq(Command.access(new Add(1), id(3), id(4)));
    FakeExecutionContext c0 = ctx(P0, both, P0, P0, P1);
    FakeExecutionContext c1 = ctx(P1, both, P0, P0, P1);
    s.deliver(c0);
    p1.deliver(c1);
    c1.forwardTo(c0);
    assertEquals(71L, ((CoreReply) s.resume(c0).replyValue()).value(), "31 + 40");
    FakeExecutionContext retire = ctx(P0, new PartitionChange(P1, false), ORACLE, ORACLE, P0, P1);
    s.deliver(retire);
    TreeMap<GroupId, PartitionTable.State> states = new TreeMap<>();
    states.put(P0, PartitionTable.State.ACTIVE);
    states.put(P1, PartitionTable.State.RETIRED);
    retire.receive(ORACLE, new PartitionTable(states, new TreeMap<>()));
    s.resume(retire);
    s.deliver(ctx(P0, new PartitionChange(P1, true), ORACLE, ORACLE, P0, P1)); // waits for its table
    s.deliver(ctx(P0, new SsmrReq(Command.access(new Add(1), id(1), id(9))), P0, P0, P1)); // holds 1 and 9
    s.deliver(ctx(P0, new CreateReq(Command.create(id(6), 60L), P0), P0, ORACLE, P0)); // holds 6, made
    assertTrue(s.deliver(ctx(P0, new AccessReq(Command.access(new Add(5), id(2), id(1))), P0, P0)).isBlocked());
    assertTrue(s.deliver(ctx(P0, new MoveReq(new ObjId[] {id(3)}, P0, P1), P1, ORACLE, P0, P1)).isBlocked());
    return s;
  }

  /**
   * The snapshot of {@link #populated()} as this version writes it (its message ids are those
   * of one run). A replica must read the snapshots its predecessors wrote: changing how a
   * partition encodes its state changes these bytes and fails this test.
   */
  static final String POPULATED_SNAPSHOT = "0501020366010200146601040028660106003e03020c120170b10102c201000166010c0078"
      + "0202c8010002020402ca01000106";

  @Test
  void aPopulatedSnapshotIsReadAndWrittenByteForByte() {
    byte[] written = java.util.HexFormat.of().parseHex(POPULATED_SNAPSHOT);
    PartitionServer s = server(P0);
    s.restore(written);
    assertArrayEquals(written, s.snapshot(), "read and written again alike");
    assertEquals(List.of(id(1), id(2), id(3)), List.copyOf(s.localIds()));
    assertEquals(31L, ((Counter) s.object(id(3))).value);
    PartitionStatsReply stats = (PartitionStatsReply) s.query(new StatsReq(false));
    assertEquals(List.of(3L, 5L, 1L, 2L), List.of(stats.objects(), stats.executed(), stats.multiPartition(),
        stats.retries()), "objects, executed, multi-partition, retries");
    for (long held : new long[] {1, 9, 6}) {
      assertEquals(CoreReply.Status.BUSY, read(s, new Sum(), held).status(), "object " + held + " is held");
    }
    for (long claimed : new long[] {2, 3}) {
      assertEquals(CoreReply.Status.BUSY, read(s, new Sum(), claimed).status(), "object " + claimed + " is claimed by a blocked command");
    }
    assertTrue(s.deliver(ctx(P0, new MoveReq(new ObjId[] {id(5)}, P0, P1), P1, ORACLE, P0, P1)).isBlocked(),
        "a move out waits for the table of the change in progress");
    FakeExecutionContext made = ctx(P0, new CreateReq(Command.create(id(6), 60L), P0), P0, ORACLE, P0);
    made.receive(ORACLE, new Verdict(Verdict.Status.OK, P0));
    assertEquals(CoreReply.Status.OK, ((CoreReply) s.resume(made).replyValue()).status());
    assertEquals(60L, ((Counter) s.object(id(6))).value, "the object made before the snapshot is installed");
  }

  @Test
  void aPopulatedPartitionRestoresToTheSameState() {
    PartitionServer s = populated();
    PartitionServer t = server(P0);
    t.restore(s.snapshot());
    assertArrayEquals(s.snapshot(), t.snapshot());
    t.restore(new byte[0]);
    assertArrayEquals(server(P0).snapshot(), t.snapshot(), "an empty snapshot clears everything");
  }
}
