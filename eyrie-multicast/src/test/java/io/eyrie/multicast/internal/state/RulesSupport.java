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
