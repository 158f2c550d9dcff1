package io.eyrie.oracle;

import static io.eyrie.oracle.DssmrSim.ORACLE;
import static io.eyrie.oracle.DssmrSim.p;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Command;
import io.eyrie.core.Eyrie;
import io.eyrie.core.ObjId;
import io.eyrie.core.PRObject;
import io.eyrie.core.StateMachine;
import io.eyrie.core.protocol.Msgs;
import io.eyrie.multicast.CodecRegistry;
import io.eyrie.oracle.DssmrSim.Msg;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An application object that cannot be encoded (it holds an unregistered type) must not lose
 * data or park a partition: a move of it is refused with the object still at its source, and an
 * S-SMR command that needs its value answers an error at every partition.
 */
@Timeout(30)
class UnencodableObjectTest {
  /** An object whose content the application may set to anything. */
  static final class Box extends PRObject {
    Object content;

    private Box() {}

    Box(ObjId id) {
      super(id);
    }
  }

  /** Operations: spoil (store an unregistered type in the box), peek (return the content's class). */
  record Spoil() {}

  record Peek() {}

  static final class BoxServer extends StateMachine {
    @Override
    protected Object executeCommand(Command c) {
      Box b = (Box) getObject(c.target());
      if (c.op() instanceof Spoil) {
        b.content = new AtomicLong(1);
        return "spoilt";
      }
      return b.content == null ? "empty" : b.content.getClass().getSimpleName();
    }

    @Override
    protected PRObject createObject(Command c) {
      return new Box(c.target());
    }
  }

  private static CodecRegistry registry() {
    return Eyrie.registry().register(100, Box.class).register(101, Spoil.class).register(102, Peek.class);
  }

  private static final ObjId V = ObjId.valueOf(1);
  private static final ObjId W = ObjId.valueOf(2);

  private static DssmrSim spoiltBoxAtP0() {
    DssmrSim sim = new DssmrSim(2, BoxServer::new, registry());
    for (ObjId id : new ObjId[] {V, W}) {
      var at = id.equals(V) ? p(0) : p(1);
      Msg c = sim.submitAll(sim.msg(new Msgs.CreateReq(Command.create(id, null), at), at, ORACLE, at));
      sim.settle();
      assertEquals(Msgs.OK, sim.replies.get(c.id()).status());
    }
    Msg s = sim.submitAll(sim.msg(new Msgs.AccessReq(Command.access(new Spoil(), V)), p(0), p(0)));
    sim.settle();
    assertEquals("spoilt", sim.replies.get(s.id()).value());
    return sim;
  }

  @Test
  void aMoveOfAnUnencodableObjectIsRefusedAndTheObjectStays() {
    DssmrSim sim = spoiltBoxAtP0();
    Msg m = sim.submitAll(sim.msg(new Msgs.MoveReq(new ObjId[] {V}, p(0), p(1)), p(1), ORACLE, p(0), p(1)));
    sim.settle();
    assertTrue(sim.errors.containsKey(m.id()), "the move is answered with an error: " + sim.replies.get(m.id()));
    assertTrue(sim.errors.get(m.id()).contains("cannot be encoded"), sim.errors.get(m.id()));
    sim.groups.forEach((g, s) -> assertEquals(0, s.queuedCount(), g + " is not parked"));
    assertTrue(sim.held(p(0)).contains(V.value()), "the object stays at its source");
    Msg peek = sim.submitAll(sim.msg(new Msgs.AccessReq(Command.access(new Peek(), V)), p(0), p(0)));
    sim.settle();
    assertEquals("AtomicLong", sim.replies.get(peek.id()).value(), "and keeps its state");
  }

  @Test
  void anSsmrCommandOnAnUnencodableObjectIsAnErrorEverywhere() {
    DssmrSim sim = spoiltBoxAtP0();
    Msg m = sim.submitAll(sim.msg(new Msgs.SsmrReq(Command.access(new Peek(), V, W)), p(1), p(0), p(1)));
    sim.settle();
    assertTrue(sim.errors.containsKey(m.id()), "an error reply, not a park");
    sim.groups.forEach((g, s) -> assertEquals(0, s.queuedCount(), g + " is not parked"));
  }
}
