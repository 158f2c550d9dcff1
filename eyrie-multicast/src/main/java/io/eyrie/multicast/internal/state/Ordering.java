package io.eyrie.multicast.internal.state;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.Wire.Decision;
import io.eyrie.multicast.internal.Wire.Start;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Set;
import java.util.TreeSet;

/**
 * Skeen ordering at one group: the logical clock and the messages known here but not delivered
 * yet, undecided (waiting for proposals, by local timestamp) or decided (by final timestamp). A
 * message's final timestamp is the largest of its destinations' local timestamps (its decision); a decided message is
 * delivered once no undecided one could still end up before it. Kept apart so that the delivery
 * rule is in one place and the snapshot of this part is written next to the fields it covers.
 */
final class Ordering {
  private final GroupId self;

  long clock;
  /** Known messages not yet delivered here. */
  final HashMap<MsgId, Msg> pending = new HashMap<>();
  final TreeSet<Msg> undecided = new TreeSet<>(Msg.BY_LOCAL_TS);
  final TreeSet<Msg> decided = new TreeSet<>(Msg.BY_FINAL_TS);

  Ordering(GroupId self) {
    this.self = self;
  }

  Msg get(MsgId id) {
    return pending.get(id);
  }

  boolean isPending(MsgId id) {
    return pending.containsKey(id);
  }

  Set<MsgId> ids() {
    return pending.keySet();
  }

  /**
   * Makes a message pending: a single-destination message is decided at once; otherwise it
   * waits, undecided, with this group's local timestamp (design 4.3.1, rule 2).
   */
  Msg add(Start s) {
    Msg m = new Msg(s);
    pending.put(s.id(), m);
    clock++;
    if (s.dests().length == 1) {
      m.finalTs = clock;
      decided.add(m);
    } else {
      m.localTs = clock;
      m.proposals.put(self, clock);
      undecided.add(m);
    }
    return m;
  }

  /** Decides an undecided message with its destinations' local timestamps (rule 6). */
  void decide(Msg m, Decision d) {
    undecided.remove(m);
    for (int i = 0; i < d.groups().length; i++) {
      m.proposals.put(d.groups()[i], d.ts()[i]);
    }
    m.finalTs = d.finalTs();
    clock = Math.max(clock, m.finalTs);
    decided.add(m);
  }

  /** This group's timestamp for a pending message (its proposal, or its decision if it had none). */
  static long ownTs(Msg m) {
    return m.localTs >= 0 ? m.localTs : m.finalTs;
  }

  /**
   * Removes and returns the next deliverable message: the first decided one, unless an undecided
   * message has a local timestamp at most its final one (its final timestamp could still be
   * smaller). Returns {@code null} if there is none.
   */
  Msg pollDeliverable() {
    if (decided.isEmpty()) {
      return null;
    }
    Msg m = decided.first();
    if (!undecided.isEmpty() && undecided.first().localTs <= m.finalTs) {
      return null;
    }
    decided.pollFirst();
    pending.remove(m.start.id());
    return m;
  }

  void describeTo(StringBuilder b) {
    int n = 0;
    for (Msg m : undecided) {
      if (n++ == 3) {
        break;
      }
      b.append("  undecided ").append(m.start.id()).append(" dests=").append(Arrays.toString(m.start.dests()))
          .append(" localTs=").append(m.localTs).append(" proposals=").append(m.proposals).append('\n');
    }
    if (!decided.isEmpty()) {
      Msg m = decided.first();
      b.append("  first decided ").append(m.start.id()).append(" finalTs=").append(m.finalTs).append('\n');
    }
  }

  String describe(MsgId id) {
    Msg p = pending.get(id);
    return p == null ? "" : " pending(localTs=" + p.localTs + ", finalTs=" + p.finalTs + ", proposals="
        + p.proposals + ")";
  }

  /** Writes the clock and the pending messages in id order. */
  void writeTo(Output out, Codec codec) {
    out.writeVarLong(clock, true);
    out.writeVarInt(pending.size(), true);
    for (MsgId id : new TreeSet<>(pending.keySet())) {
      pending.get(id).writeTo(out, codec);
    }
  }

  void readFrom(Input in, Codec codec) {
    clock = in.readVarLong(true);
    int n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      Msg m = Msg.readFrom(in, codec);
      pending.put(m.start.id(), m);
      if (m.finalTs >= 0) {
        decided.add(m);
      } else {
        undecided.add(m);
      }
    }
  }
}
