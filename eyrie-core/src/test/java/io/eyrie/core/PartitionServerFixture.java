package io.eyrie.core;

import static io.eyrie.multicast.testing.TestGroups.ORACLE;
import static io.eyrie.multicast.testing.TestGroups.P0;
import static io.eyrie.multicast.testing.TestGroups.P1;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.eyrie.core.protocol.Begun;
import io.eyrie.core.protocol.CoreReply;
import io.eyrie.core.protocol.CreateReq;
import io.eyrie.core.protocol.ReadReq;
import io.eyrie.core.protocol.SsmrReq;
import io.eyrie.core.protocol.Verdict;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.testing.FakeExecutionContext;
import io.eyrie.multicast.testing.TestGroups;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the partition server's deterministic tests share: a counter service (its objects, commands
 * and state machine), the codec, servers at p0 and p1 of a one-node cluster, and creating an
 * object the way the oracle's verdict does. No cluster, no Ratis.
 */
abstract class PartitionServerFixture {
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

  /**
   * An S-SMR command on counter 1 (10, at p0) and counter 2 (20, at p1): the server and the
   * command's context at each partition.
   */
  record SsmrPair(PartitionServer s0, PartitionServer s1, FakeExecutionContext c0, FakeExecutionContext c1) {
    /** Gives each partition the other's values, as the S-SMR exchange does. */
    void exchange() {
      c0.forwardTo(c1);
      c1.forwardTo(c0);
    }
  }

  /** Servers at p0 and p1 holding counters 1 and 2, and an S-SMR command of {@code op} on both. */
  SsmrPair ssmrOnCounters1And2(Object op) {
    PartitionServer s0 = server(P0);
    PartitionServer s1 = server(P1);
    create(s0, P0, 1, 10);
    create(s1, P1, 2, 20);
    SsmrReq req = new SsmrReq(Command.access(op, id(1), id(2)));
    return new SsmrPair(s0, s1, ctx(P0, req, P0, P0, P1), ctx(P1, req, P0, P0, P1));
  }

  static CoreReply read(PartitionServer s, Object op, long... ids) {
    ObjId[] objs = java.util.Arrays.stream(ids).mapToObj(ObjId::valueOf).toArray(ObjId[]::new);
    return (CoreReply) s.query(new ReadReq(Command.access(op, objs)));
  }
}
