package io.eyrie.multicast.internal.state;

import static io.eyrie.multicast.internal.state.RulesSupport.G0;
import static io.eyrie.multicast.internal.state.RulesSupport.G1;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.Execution;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.internal.Wire.Start;
import io.eyrie.multicast.testing.StatelessDeliverer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link Execution#resumeLater}: a message that waits for another group's item without holding
 * up the messages delivered after it, resumed out of queue order when the item arrives, kept in
 * progress (and in the snapshot) until then.
 */
@Timeout(10)
class ResumeLaterTest {
  private final RulesSupport r = new RulesSupport();
  private final Map<String, Long> shipped = new HashMap<>();

  /** Mode 1 at g0: resume later on g1's item; mode 1 at g1: send that item. Mode 0: reply at once. */
  static final class App extends StatelessDeliverer {
    final List<Long> executed = new ArrayList<>();

    @Override
    public Execution deliver(ExecutionContext ctx) {
      long[] p = (long[]) ctx.payload();
      if (p[1] == 1 && ctx.group().equals(G0)) {
        return Execution.resumeLater(List.of(G1));
      }
      if (p[1] == 1) {
        ctx.send(G0, p[0] * 10);
      }
      executed.add(p[0]);
      return Execution.reply(p[0]);
    }

    @Override
    public Execution resume(ExecutionContext ctx) {
      long[] p = (long[]) ctx.payload();
      executed.add(p[0]);
      return Execution.reply(ctx.received(G1).get(0));
    }
  }

  private void ship(GroupState from, GroupState to) {
    String key = from.self() + ">" + to.self();
    long[] pos = from.channelPositions(to.self());
    long start = Math.max(shipped.getOrDefault(key, 0L), pos[0]);
    List<Object> items = start < pos[1] ? from.outboxRange(to.self(), start, 100) : List.of();
    RulesSupport.ship(to, from.self(), start, items.toArray());
    shipped.put(key, start + items.size());
  }

  private List<Long> repliedSeqs() {
    List<Long> out = new ArrayList<>();
    r.replies.forEach(e -> out.add(e.id().seq()));
    return out;
  }

  @Test
  void laterMessagesRunFirstAndTheWaitingOneCompletesWhenItsItemArrives() {
    App a0 = new App();
    GroupState g0 = r.group(G0, a0);
    GroupState g1 = r.group(G1, new App());
    Start a = r.start(0, 1, G0, G0, G1);
    r.submit(g0, a);
    r.submit(g1, a);
    long lts0 = g0.component(a.id()).lts();
    long lts1 = g1.component(a.id()).lts();
    // g1's leader decides with g0's timestamp: g1 delivers a and sends its item to g0 (held)
    r.decide(g1, a, lts0);
    assertTrue(g1.channelPositions(G0)[1] > 0, "g1 sent its item");
    // g0's leader decides with g1's timestamp; g1's item has not reached g0
    r.decide(g0, a, lts1);
    assertEquals(1, g0.queuedCount(), "a waits at g0, off the queue");
    r.submit(g0, r.start(1, 0, G0, G0));
    assertEquals(List.of(1L), a0.executed, "b ran although a was delivered first");
    assertEquals(List.of(1L), repliedSeqs());

    GroupState copy = r.restore(g0, new App());
    assertEquals(1, copy.queuedCount(), "the snapshot keeps a in progress");

    ship(g1, g0);
    assertEquals(List.of(1L, 0L), a0.executed);
    assertEquals(List.of(1L, 0L), repliedSeqs());
    assertEquals(0L, (Long) r.codec.decode(r.replies.get(1).reply().body()));
    assertEquals(0, g0.queuedCount());

    RulesSupport.ship(copy, G1, 0, g1.outboxRange(G0, 0, 100).toArray());
    assertEquals(0, copy.queuedCount(), "the restored replica resumes a too");
    assertEquals(List.of(1L, 0L, 0L), repliedSeqs());
  }

  @Test
  void aLaterWaitOnANonDestinationIsAnError() {
    GroupState g0 = r.group(G0, new StatelessDeliverer() {
      @Override
      public Execution deliver(ExecutionContext ctx) {
        return Execution.resumeLater(List.of(GroupId.valueOf("g3")));
      }
    });
    r.submit(g0, r.start(0, 0, G0, G0));
    assertEquals(Status.ERROR, r.replies.get(0).reply().status());
    assertEquals(0, g0.queuedCount());
  }
}
