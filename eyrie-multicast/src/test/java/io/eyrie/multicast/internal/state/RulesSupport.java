package io.eyrie.multicast.internal.state;

import com.esotericsoftware.kryo.io.Input;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.CodecRegistry;
import io.eyrie.multicast.Deliverer;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.Wire.ChannelBatch;
import io.eyrie.multicast.internal.Wire.Component;
import io.eyrie.multicast.internal.Wire.Decision;
import io.eyrie.multicast.internal.Wire.Forward;
import io.eyrie.multicast.internal.replication.Exchange;
import io.eyrie.multicast.internal.Wire.Start;
import io.eyrie.multicast.internal.Wire.StartBatch;
import io.eyrie.multicast.internal.state.SimGroups.Ev;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;

/**
 * Small builders for hand-written {@link GroupState} scenarios; public for the tests of the
 * packages that drive a {@code GroupState} (the channel sender, the reply router).
 */
public final class RulesSupport {
  public static final GroupId G0 = GroupId.valueOf("g0");
  public static final GroupId G1 = GroupId.valueOf("g1");
  public static final GroupId G2 = GroupId.valueOf("g2");
  public static final GroupId G3 = GroupId.valueOf("g3");
  public static final List<GroupId> ALL = List.of(G0, G1, G2, G3);
  public static final long CLIENT = 0xC11E;

  public final Codec codec = new Codec(CodecRegistry.empty());
  /** Replies emitted by every state built here, in order. */
  final List<Ev> replies = new ArrayList<>();
  long time = 10_000;

  public GroupState group(GroupId g, Deliverer app) {
    return group(g, app, SimGroups.NO_EXPIRY);
  }

  public GroupState group(GroupId g, Deliverer app, long expiryMs) {
    GroupState s = new GroupState(g, ALL, app, codec, expiryMs);
    listen(s);
    return s;
  }

  void listen(GroupState s) {
    s.setListener(new StateListener() {
      @Override
      public void reply(MsgId id, StoredReply reply) {
        replies.add(new Ev(id, reply));
      }

      @Override
      public void outboxChanged(GroupId to) {}
    });
  }

  /** Appends an item to the outbox towards {@code to} as it is, without the checks of a send. */
  public static void appendRaw(GroupState s, GroupId to, Object item) {
    s.outboxes.channels.get(to).outbox.append(item);
  }

  /** A Start of client {@link #CLIENT} with payload {@code {seq, mode}} and watermark 0. */
  public Start start(long seq, long mode, GroupId reply, GroupId... dests) {
    return start(CLIENT, seq, 0, mode, reply, dests);
  }

  public Start start(long client, long seq, long watermark, long mode, GroupId reply, GroupId... dests) {
    return new Start(MsgId.valueOf(client, seq, 0), dests, reply, codec.encode(new long[] {seq, mode}), watermark);
  }

  public long submit(GroupState s, Start... starts) {
    return s.apply(new StartBatch(time, starts));
  }

  /**
   * Decides {@code m} at {@code s} as its leader would (design 4.3.1, rule 5): applies a
   * start batch without time carrying a {@code Decision} whose own timestamp is {@code s}'s
   * applied one and whose other destinations' timestamps are {@code others} (one per other
   * destination, in destination order; a single value stands for all of them).
   */
  public long decide(GroupState s, Start m, long... others) {
    return s.apply(new StartBatch(-1, new Start[0], new Decision[] {decision(s, m, others)}, null));
  }

  /** The decision {@link #decide} applies. */
  public static Decision decision(GroupState s, Start m, long... others) {
    GroupId[] d = m.dests();
    long[] ts = new long[d.length];
    int k = 0;
    for (int i = 0; i < d.length; i++) {
      if (d[i].equals(s.self())) {
        io.eyrie.multicast.internal.Wire.Component c = s.component(m.id());
        ts[i] = c == null ? -1 : c.lts();
      } else {
        ts[i] = others.length == 1 ? others[0] : others[k];
        k++;
      }
    }
    return new Decision(m.id(), d, ts, m.digest(), false);
  }

  /**
   * Runs the groups to rest as their leaders would (design 4.3.1): each group's leader runs an
   * {@link Exchange} over its applied state (components pushed, pulled and answered at once, no
   * loss), appends its decisions and forwards as start batches without time, and every channel
   * ships its outbox (with acknowledgements). Simulated time advances by {@code T_pull} per round,
   * for {@code rounds} rounds (forwards happen after {@code T_fwd}, 20 rounds).
   */
  public static void settle(int rounds, GroupState... gs) {
    java.util.Map<GroupId, GroupState> by = new java.util.TreeMap<>();
    java.util.Map<GroupId, Exchange> ex = new java.util.TreeMap<>();
    java.util.Map<GroupId, List<Decision>> decs = new java.util.TreeMap<>();
    java.util.Map<GroupId, List<Forward>> fwds = new java.util.TreeMap<>();
    List<Object[]> net = new ArrayList<>();
    for (GroupState g : gs) {
      GroupId self = g.self();
      by.put(self, g);
      decs.put(self, new ArrayList<>());
      fwds.put(self, new ArrayList<>());
      Exchange e = new Exchange(self, new Exchange.Net() {
        @Override
        public void send(GroupId to, List<Component> list) {
          net.add(new Object[] {self, to, list});
        }

        @Override
        public void decide(Decision d) {
          decs.get(self).add(d);
        }

        @Override
        public void forward(Forward f) {
          fwds.get(self).add(f);
        }
      });
      e.leadership(true, 0);
      ex.put(self, e);
    }
    long now = 0;
    for (int round = 0; round < rounds; round++) {
      now += Exchange.T_PULL_NANOS;
      for (GroupState g : gs) {
        ex.get(g.self()).tick(Exchange.viewOf(g), now);
      }
      while (!net.isEmpty()) {
        Object[] m = net.remove(0);
        GroupState to = by.get((GroupId) m[1]);
        if (to == null) {
          continue;
        }
        @SuppressWarnings("unchecked")
        List<Component> list = (List<Component>) m[2];
        ex.get(to.self()).received(Exchange.viewOf(to), list, now);
        GroupState from = by.get((GroupId) m[0]);
        ex.get(from.self()).received(Exchange.viewOf(from), Exchange.answer(Exchange.viewOf(to), list), now);
      }
      for (GroupState g : gs) {
        List<Decision> d = decs.get(g.self());
        List<Forward> f = fwds.get(g.self());
        if (!d.isEmpty() || !f.isEmpty()) {
          g.apply(new StartBatch(-1, new Start[0], d.toArray(new Decision[0]), f.toArray(new Forward[0])));
          d.clear();
          f.clear();
        }
      }
      for (GroupState from : gs) {
        for (GroupState to : gs) {
          if (from != to) {
            long[] pos = from.channelPositions(to.self());
            List<Object> items = from.outboxRange(to.self(), pos[0], Integer.MAX_VALUE);
            to.apply(new ChannelBatch(from.self(), pos[0], items.toArray(), pos[2]));
          }
        }
      }
    }
  }

  /** {@link #settle(int, GroupState...)} for 30 rounds. */
  public static void settle(GroupState... gs) {
    settle(30, gs);
  }

  public static long ship(GroupState to, GroupId from, long firstSeq, Object... items) {
    return to.apply(new ChannelBatch(from, firstSeq, items, 0));
  }

  public byte[] snapshot(GroupState s) {
    return SimGroups.snapshot(s);
  }

  public GroupState restore(GroupState s, Deliverer freshApp) {
    GroupState r = group(s.self(), freshApp);
    GroupStateSnapshot.read(r, new Input(snapshot(s)));
    return r;
  }

  public List<Ev> repliesFor(MsgId id) {
    List<Ev> out = new ArrayList<>();
    for (Ev e : replies) {
      if (e.id().equals(id)) {
        out.add(e);
      }
    }
    return out;
  }

  /** A deliverer whose replicated state is the log of what it did, one line per step. */
  abstract static class LoggingApp implements Deliverer {
    final List<String> log = new ArrayList<>();

    @Override
    public byte[] snapshot() {
      return String.join("\n", log).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void restore(byte[] state) {
      log.clear();
      String s = new String(state, StandardCharsets.UTF_8);
      if (!s.isEmpty()) {
        log.addAll(Arrays.asList(s.split("\n")));
      }
    }
  }

  /**
   * A deliverer that logs what it does (its replicated state) and parks messages of mode
   * {@code m >= 10} until it has heard from the groups whose indexes are the set bits of
   * {@code m - 10} (bit 0 = g0, ...). It replies with its log's length.
   */
  static final class ParkingApp extends LoggingApp {
    static long awaiting(GroupId... gs) {
      long bits = 0;
      for (GroupId g : gs) {
        bits |= 1L << ALL.indexOf(g);
      }
      return 10 + bits;
    }

    private static List<GroupId> awaited(ExecutionContext ctx) {
      long mode = ((long[]) ctx.payload())[1];
      List<GroupId> out = new ArrayList<>();
      for (int i = 0; mode >= 10 && i < ALL.size(); i++) {
        if (((mode - 10) & (1L << i)) != 0) {
          out.add(ALL.get(i));
        }
      }
      return out;
    }

    @Override
    public Execution deliver(ExecutionContext ctx) {
      log.add("deliver " + ctx.id());
      List<GroupId> a = awaited(ctx);
      return a.isEmpty() ? Execution.reply((long) log.size()) : Execution.awaitFrom(a);
    }

    @Override
    public Execution resume(ExecutionContext ctx) {
      StringBuilder b = new StringBuilder("resume " + ctx.id());
      for (GroupId g : new TreeSet<>(ctx.dests())) {
        b.append(' ').append(g).append('=').append(ctx.received(g));
      }
      log.add(b.toString());
      return Execution.reply((long) log.size());
    }
  }
}
