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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Rules of {@link GroupState}'s parts checked on the part alone, and the snapshot's version check. */
@Timeout(30)
class GroupStatePartsTest {
  private final RulesSupport t = new RulesSupport();

  @Test
  void orderingDeliversADecidedMessageOnlyOnceNoUndecidedOneCanEndUpBeforeIt() {
    Ordering o = new Ordering(G0);
    Msg multi = o.add(t.start(1, SimDeliverer.PLAIN, G0, G0, G1));
    Msg single = o.add(t.start(2, SimDeliverer.PLAIN, G0, G0));
    assertEquals(1, multi.localTs);
    assertNull(o.pollDeliverable(), "final timestamp 2 waits while a message with local timestamp 1 is undecided");

    o.decide(multi, new io.eyrie.multicast.internal.Wire.Decision(multi.start.id(), new io.eyrie.multicast.GroupId[] {G0, G1},
        new long[] {1, 5}, multi.start.digest(), false));
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
