package io.eyrie.multicast.internal.state;

import io.eyrie.multicast.Deliverer;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.function.Consumer;

/**
 * A deterministic test application for the single-threaded simulation: records, as its replicated
 * state, the ids of the messages it executes, in order, and replies with a value derived from the
 * message and its position. The payload is a {@code long[] {token, mode}}; the mode chooses how
 * the destinations exchange channel data (Appendix B):
 *
 * <ul>
 *   <li>{@link #PLAIN}: reply at once;
 *   <li>{@link #EXCHANGE}: every destination sends a value to every other one and waits for all
 *       of theirs (S-SMR-like);
 *   <li>{@link #MOVE}: the first destination sends a value to the last one, which waits for it;
 *   <li>{@link #DATA_TO_REPLY}: every other destination sends a value to the reply group (which
 *       doubles as its started-signal); nobody waits;
 *   <li>{@link #SEND_NO_WAIT}: the first destination sends two values to every other one; nobody
 *       waits (items may arrive before or after the receiver executes the message);
 *   <li>{@link #LATER}: the first destination sends a value to every other one, which waits for
 *       it off the queue ({@code resumeLater}), letting later messages run meanwhile;
 *   <li>{@link #BLOCK}: answers {@code blocked} while a {@link #LATER} message waits here (design
 *       4.4: it has not started, K7), and runs once none does.
 * </ul>
 *
 * <p>It records two orders: {@link #seen} (the order messages reached the head, the delivery
 * order) and {@link #delivered} (the order they started: a blocked message starts later).
 *
 * <p>Anything unexpected (a wrong item, a resume without a park) is reported to the
 * {@code violations} sink, which is not part of the replicated state.
 */
public final class SimDeliverer implements Deliverer {
  public static final long PLAIN = 0;
  static final long EXCHANGE = 1;
  static final long MOVE = 2;
  static final long DATA_TO_REPLY = 3;
  static final long SEND_NO_WAIT = 4;
  static final long LATER = 5;
  static final long BLOCK = 6;
  static final int MODES = 7;

  private final ArrayList<MsgId> seen = new ArrayList<>();
  private final HashSet<MsgId> seenIndex = new HashSet<>();
  private final java.util.TreeSet<MsgId> waitingLater = new java.util.TreeSet<>();
  private final ArrayList<MsgId> delivered = new ArrayList<>();
  /** How many times it answered blocked (not replicated state: a counter for the schedules). */
  long blocks;
  /** Told of every message this replica starts (not replicated state: for the simulation's checks). */
  Consumer<MsgId> onStart = id -> {};
  private final HashSet<MsgId> index = new HashSet<>();
  private final Consumer<String> violations;

  public SimDeliverer(Consumer<String> violations) {
    this.violations = violations == null ? v -> {} : violations;
  }

  /** The ids executed so far (begun executing, for a parked head), in the order they started. */
  List<MsgId> delivered() {
    return delivered;
  }

  /** The ids in the order they reached the head (the delivery order; a blocked one is here first). */
  List<MsgId> seen() {
    return seen;
  }

  boolean hasExecuted(MsgId id) {
    return index.contains(id);
  }

  /** The value that group {@code from} sends for the message with {@code token}. */
  static long value(long token, GroupId from, int i) {
    return token * 1_000L + (from.name().hashCode() & 0x3f) * 4L + i;
  }

  @Override
  public Execution deliver(ExecutionContext ctx) {
    long[] p = payload(ctx);
    if (p == null) {
      return Execution.error("bad payload");
    }
    if (!ctx.dests().contains(ctx.group())) {
      violations.accept(ctx.group() + " executes " + ctx.id() + " but is not among its dests " + ctx.dests());
    }
    if (seenIndex.add(ctx.id())) {
      seen.add(ctx.id());
    }
    if (p[1] == BLOCK && !waitingLater.isEmpty()) {
      blocks++;
      return Execution.blocked();
    }
    if (!index.add(ctx.id())) {
      violations.accept(ctx.group() + " executes " + ctx.id() + " twice");
    }
    delivered.add(ctx.id());
    onStart.accept(ctx.id());
    List<GroupId> d = ctx.dests();
    GroupId self = ctx.group();
    if (d.size() > 1) {
      if (p[1] == EXCHANGE) {
        for (GroupId g : d) {
          if (!g.equals(self)) {
            ctx.send(g, value(p[0], self, 0));
          }
        }
        return Execution.awaitFrom(others(d, self));
      } else if (p[1] == MOVE) {
        if (self.equals(d.get(0))) {
          ctx.send(d.get(d.size() - 1), value(p[0], self, 0));
        } else if (self.equals(d.get(d.size() - 1))) {
          return Execution.awaitFrom(List.of(d.get(0)));
        }
      } else if (p[1] == DATA_TO_REPLY) {
        if (!ctx.isReplyGroup()) {
          ctx.send(ctx.replyGroup(), value(p[0], self, 0));
        }
      } else if (p[1] == LATER) {
        if (self.equals(d.get(0))) {
          for (GroupId g : d) {
            if (!g.equals(self)) {
              ctx.send(g, value(p[0], self, 0));
            }
          }
        } else {
          waitingLater.add(ctx.id());
          return Execution.resumeLater(List.of(d.get(0)));
        }
      } else if (p[1] == SEND_NO_WAIT) {
        if (self.equals(d.get(0))) {
          for (GroupId g : d) {
            if (!g.equals(self)) {
              ctx.send(g, value(p[0], self, 0));
              ctx.send(g, value(p[0], self, 1));
            }
          }
        }
      }
    }
    return reply(ctx, p);
  }

  @Override
  public Execution resume(ExecutionContext ctx) {
    long[] p = payload(ctx);
    if (p == null) {
      return Execution.error("bad payload");
    }
    List<GroupId> d = ctx.dests();
    GroupId self = ctx.group();
    List<GroupId> awaited;
    if (p[1] == LATER && waitingLater.remove(ctx.id())) {
      List<Object> got = ctx.received(d.get(0));
      if (got.size() != 1 || !Long.valueOf(value(p[0], d.get(0), 0)).equals(got.get(0))) {
        violations.accept(self + " resumes " + ctx.id() + " with items " + got + " from " + d.get(0));
      }
      return reply(ctx, p);
    }
    if (p[1] == EXCHANGE) {
      awaited = others(d, self);
    } else if (p[1] == MOVE && self.equals(d.get(d.size() - 1))) {
      awaited = List.of(d.get(0));
    } else {
      violations.accept(self + " resumes " + ctx.id() + " which it never parked (mode " + p[1] + ")");
      return Execution.error("unexpected resume");
    }
    for (GroupId from : awaited) {
      List<Object> got = ctx.received(from);
      if (got.size() != 1 || !Long.valueOf(value(p[0], from, 0)).equals(got.get(0))) {
        violations.accept(self + " resumes " + ctx.id() + " with items " + got + " from " + from + ", expected ["
            + value(p[0], from, 0) + "]");
      }
    }
    return reply(ctx, p);
  }

  private Execution reply(ExecutionContext ctx, long[] p) {
    return Execution.reply(p[0] * 1_000_003L + delivered.size() * 7L + ctx.dests().size());
  }

  private long[] payload(ExecutionContext ctx) {
    Object o = ctx.payload();
    if (o instanceof long[] p && p.length == 2) {
      return p;
    }
    violations.accept(ctx.group() + ": bad payload for " + ctx.id());
    return null;
  }

  private static List<GroupId> others(List<GroupId> dests, GroupId self) {
    List<GroupId> out = new ArrayList<>(dests);
    out.remove(self);
    return out;
  }

  @Override
  public byte[] snapshot() {
    ByteBuffer b = ByteBuffer.allocate(12 + 20 * (delivered.size() + seen.size() + waitingLater.size()));
    for (List<MsgId> l : List.of(delivered, seen, new ArrayList<>(waitingLater))) {
      b.putInt(l.size());
      for (MsgId id : l) {
        b.putLong(id.client()).putLong(id.seq()).putInt(id.attempt());
      }
    }
    return b.array();
  }

  @Override
  public void restore(byte[] state) {
    delivered.clear();
    index.clear();
    seen.clear();
    seenIndex.clear();
    waitingLater.clear();
    ByteBuffer b = ByteBuffer.wrap(state);
    for (int k = 0; k < 3 && b.remaining() >= 4; k++) {
      int n = b.getInt();
      for (int i = 0; i < n; i++) {
        MsgId id = MsgId.valueOf(b.getLong(), b.getLong(), b.getInt());
        if (k == 0) {
          delivered.add(id);
          index.add(id);
        } else if (k == 1) {
          seen.add(id);
          seenIndex.add(id);
        } else {
          waitingLater.add(id);
        }
      }
    }
  }
}
