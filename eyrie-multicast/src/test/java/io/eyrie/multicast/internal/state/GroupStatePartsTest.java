package io.eyrie.multicast.internal.state;

import static io.eyrie.multicast.internal.state.RulesSupport.ALL;
import static io.eyrie.multicast.internal.state.RulesSupport.G0;
import static io.eyrie.multicast.internal.state.RulesSupport.G1;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.internal.Wire.Propose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Rules of {@link GroupState}'s parts checked on the part alone, and the snapshot's version check. */
@Timeout(30)
class GroupStatePartsTest {
  private final RulesSupport t = new RulesSupport();

  @Test
  void orderingDeliversADecidedMessageOnlyOnceNoUndecidedOneCanEndUpBeforeIt() {
    Outboxes out = new Outboxes(G0, ALL, new StateCounters());
    Ordering o = new Ordering(G0, out);
    Msg multi = o.add(t.start(1, SimDeliverer.PLAIN, G0, G0, G1));
    Msg single = o.add(t.start(2, SimDeliverer.PLAIN, G0, G0));
    assertEquals(1, out.positions(G1)[1], "the multi-group message's proposal goes to g1");
    assertTrue(out.range(G1, 0, 10).get(0) instanceof Propose p && p.ts() == 1);
    assertNull(o.pollDeliverable(), "final timestamp 2 waits while a message with local timestamp 1 is undecided");

    o.addProposal(multi, G1, 5);
    assertEquals(5, o.clock, "the clock moves past a decided timestamp");
    assertSame(single, o.pollDeliverable());
    assertSame(multi, o.pollDeliverable());
    assertNull(o.pollDeliverable());
    assertFalse(o.isPending(multi.start.id()));
  }

  @Test
  void aSnapshotOfAnotherVersionIsRefusedWithAClearMessage() {
    Output out = new Output(64, -1);
    out.writeInt(2);
    out.writeString(G0.name());
    GroupState s = t.group(G0, new SimDeliverer(null));
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> GroupStateSnapshot.read(s, new Input(out.toBytes())));
    assertTrue(e.getMessage().contains("unsupported snapshot version 2"), e.getMessage());
  }
}
