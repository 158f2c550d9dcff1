package io.eyrie.multicast.internal.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.Wire.Component;
import io.eyrie.multicast.internal.Wire.Decision;
import io.eyrie.multicast.internal.Wire.Forward;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The leader exchange of design 4.3.1 against a hand-driven view: what it pushes and when. */
@Timeout(10)
class ExchangeTest {
  static final GroupId G0 = GroupId.valueOf("g0");
  static final GroupId G1 = GroupId.valueOf("g1");
  static final MsgId M = MsgId.valueOf(1, 0, 0);

  /** A view of g1's applied state holding M undecided (once {@code applied}) with lts 5. */
  static class FakeView implements Exchange.View {
    boolean applied;

    @Override
    public Component component(MsgId id) {
      return applied && id.equals(M) ? new Component(M, G1, 5, 42, null) : null;
    }

    @Override
    public SortedMap<MsgId, GroupId[]> undecided() {
      TreeMap<MsgId, GroupId[]> out = new TreeMap<>();
      if (applied) {
        out.put(M, new GroupId[] {G0, G1});
      }
      return out;
    }

    @Override
    public GroupId[] undecided(MsgId id) {
      return undecided().get(id);
    }

    @Override
    public Map<GroupId, Long> loggedComponents(MsgId id) {
      return Map.of();
    }

    @Override
    public Set<GroupId> forwardedTo(MsgId id) {
      return Set.of();
    }
  }

  /**
   * g0's component reaches g1's leader before g1 applied its own Start (it waits as an early
   * component); once g1 applies it, g1 decides at once and still pushes its own component to g0,
   * which needs it to decide (without it g0 waits for its next pull, 50 ms or more: measured
   * isolated 2-group latency went from about 2 ms to 56 ms).
   */
  @Test
  void aLeaderThatDecidesWithAnEarlyComponentStillPushesItsOwn() {
    List<String> sent = new ArrayList<>();
    List<Decision> decided = new ArrayList<>();
    FakeView view = new FakeView();
    Exchange x = new Exchange(G1, new Exchange.Net() {
      @Override
      public void send(GroupId to, List<Component> list) {
        sent.add(to + ":" + list.get(0).id() + "@" + list.get(0).lts());
      }

      @Override
      public void decide(Decision d) {
        decided.add(d);
      }

      @Override
      public void forward(Forward f) {}
    });
    x.leadership(true, 0);
    x.received(view, List.of(new Component(M, G0, 7, 42, null)), 1);
    assertEquals(List.of(), decided, "nothing to decide before g1 applied its own Start");
    view.applied = true;
    x.pending(M);
    x.flush(view, 2);
    assertEquals(1, decided.size(), "decided with the early component");
    assertEquals(7, decided.get(0).finalTs());
    assertEquals(List.of("g0:" + M + "@5"), sent, "g1's own component still goes to g0");
  }

  /** g1's applied state with {@code n} undecided messages to g0 and g1, counting the reads of own components. */
  static final class ManyView implements Exchange.View {
    final TreeMap<MsgId, GroupId[]> undecided = new TreeMap<>();
    final Map<MsgId, Long> logged = new java.util.HashMap<>();
    int componentReads;

    ManyView(int n) {
      for (int i = 0; i < n; i++) {
        undecided.put(MsgId.valueOf(2, i, 0), new GroupId[] {G0, G1});
      }
    }

    @Override
    public Component component(MsgId id) {
      componentReads++;
      return undecided.containsKey(id) ? new Component(id, G1, 5, 42, null) : null;
    }

    @Override
    public SortedMap<MsgId, GroupId[]> undecided() {
      return new TreeMap<>(undecided);
    }

    @Override
    public GroupId[] undecided(MsgId id) {
      return undecided.get(id);
    }

    @Override
    public Map<GroupId, Long> loggedComponents(MsgId id) {
      Long ts = logged.get(id);
      return ts == null ? Map.of() : Map.of(G0, ts);
    }

    @Override
    public Set<GroupId> forwardedTo(MsgId id) {
      return Set.of();
    }
  }

  /**
   * The periodic step does not read every undecided message's state at every tick (each read
   * takes the state's lock, which the apply thread needs): a message it could not decide is tried
   * again after T_pull, and one whose missing component then shows up in the log (a Conflict
   * item) is decided at that try.
   */
  @Test
  void theTickTriesAnUndecidableMessageOncePerPullIntervalNotEveryTick() {
    ManyView view = new ManyView(200);
    List<Decision> decided = new ArrayList<>();
    Exchange x = new Exchange(G1, new Exchange.Net() {
      @Override
      public void send(GroupId to, List<Component> list) {}

      @Override
      public void decide(Decision d) {
        decided.add(d);
      }

      @Override
      public void forward(Forward f) {}
    });
    long ms = 1_000_000L;
    x.leadership(true, 0);
    x.tick(view, 0);
    int first = view.componentReads;
    for (long now = 10; now < 50; now += 10) {
      x.tick(view, now * ms);
    }
    assertEquals(first, view.componentReads, "ticks within T_pull of the first read nothing more");
    MsgId late = MsgId.valueOf(2, 7, 0);
    view.logged.put(late, 9L);
    x.tick(view, 40 * ms);
    assertEquals(List.of(), decided, "not tried again before T_pull");
    x.tick(view, Exchange.T_PULL_NANOS);
    assertEquals(1, decided.size(), "tried again after T_pull, with the component the log holds");
    assertEquals(late, decided.get(0).id());
  }

  /**
   * A component that arrives after the message was decided here (the answer to a push, a late
   * pull) is dropped, not kept with the early ones: under load every decided message got one,
   * and the early buffer, scanned at every tick, grew to thousands of entries.
   */
  @Test
  void aLateComponentOfADecidedMessageIsNotKeptAsEarly() {
    FakeView view = new FakeView() {
      @Override
      public SortedMap<MsgId, GroupId[]> undecided() {
        return new TreeMap<>(); // M is decided here, and still retained (its component is known)
      }
    };
    view.applied = true;
    Exchange x = new Exchange(G1, new Exchange.Net() {
      @Override
      public void send(GroupId to, List<Component> list) {}

      @Override
      public void decide(Decision d) {}

      @Override
      public void forward(Forward f) {}
    });
    x.leadership(true, 0);
    x.received(view, List.of(new Component(M, G0, 7, 42, null)), 1);
    assertEquals(0, x.earlyCount(), "decided here: the late component is dropped");
    view.applied = false; // not applied here yet: a component waits as early (rule 3)
    x.received(view, List.of(new Component(M, G0, 7, 42, null)), 2);
    assertEquals(1, x.earlyCount());
  }
}
