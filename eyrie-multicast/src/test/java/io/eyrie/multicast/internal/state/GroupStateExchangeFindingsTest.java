package io.eyrie.multicast.internal.state;

import static io.eyrie.multicast.internal.state.RulesSupport.G0;
import static io.eyrie.multicast.internal.state.RulesSupport.G1;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.internal.Wire.Component;
import io.eyrie.multicast.internal.Wire.Decision;
import io.eyrie.multicast.internal.Wire.Forward;
import io.eyrie.multicast.internal.Wire.Start;
import io.eyrie.multicast.internal.replication.Exchange;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Findings of the simulation about {@link Exchange}, each as the smallest schedule that shows it. */
@Timeout(30)
class GroupStateExchangeFindingsTest {
  private final RulesSupport t = new RulesSupport();

  /** Records what an exchange appends. */
  static final class Out implements Exchange.Net {
    final List<Decision> decides = new ArrayList<>();
    final List<Forward> forwards = new ArrayList<>();
    final List<List<Component>> sent = new ArrayList<>();

    @Override
    public void send(GroupId to, List<Component> list) {
      sent.add(list);
    }

    @Override
    public void decide(Decision d) {
      decides.add(d);
    }

    @Override
    public void forward(Forward f) {
      forwards.add(f);
    }
  }

  /**
   * Rule 5 / rule 9 at any clock value: "never appended" was Long.MIN_VALUE and {@code now -
   * MIN_VALUE} overflowed to a negative number, so the first decision looked appended a moment ago
   * and was never appended, and no forward was ever logged (whatever the clock, e.g. nanoTime).
   */
  @Test
  void aLeaderHoldingEveryComponentAppendsItsDecisionAndForwardsASilentDestination() {
    GroupState a = t.group(G0, new SimDeliverer(null));
    GroupState b = t.group(G1, new SimDeliverer(null));
    Start m = t.start(1, SimDeliverer.PLAIN, G0, G0, G1);
    t.submit(a, m);
    t.submit(b, m);
    Out out = new Out();
    Exchange ex = new Exchange(G0, out);
    long now = 123_456_789L;
    ex.leadership(true, now);
    ex.tick(Exchange.viewOf(a), now);
    ex.received(Exchange.viewOf(a), List.of(b.component(m.id())), now + 1);
    assertEquals(1, out.decides.size(), "holding every component, the leader appends its decision");

    // A destination that never answers is forwarded to after T_fwd.
    GroupState c = t.group(G0, new SimDeliverer(null));
    Start m2 = t.start(2, SimDeliverer.PLAIN, G0, G0, G1);
    t.submit(c, m2);
    Out out2 = new Out();
    Exchange ex2 = new Exchange(G0, out2);
    ex2.leadership(true, now);
    ex2.tick(Exchange.viewOf(c), now);
    ex2.tick(Exchange.viewOf(c), now + Exchange.T_FWD_NANOS);
    assertTrue(out2.forwards.size() == 1 && out2.forwards.get(0).to()[0].equals(G1), () -> "forwards " + out2.forwards);
  }
}
