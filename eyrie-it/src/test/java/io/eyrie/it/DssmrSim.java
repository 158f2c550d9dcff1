package io.eyrie.it;

import io.eyrie.core.Command;
import io.eyrie.core.protocol.ConsultReq;
import io.eyrie.core.protocol.CoreReply;
import io.eyrie.core.protocol.OracleMapReply;
import io.eyrie.core.protocol.PartitionStatsReply;
import io.eyrie.core.protocol.Prophecy;
import io.eyrie.core.protocol.StatsReq;
import io.eyrie.examples.bank.BankServer;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Deliverer;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.testing.SimGroup;
import io.eyrie.oracle.OracleStateMachine;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A deterministic DS-SMR cluster for replaying schedules: the real group states of the oracle and
 * the partitions (through the multicast test jar's {@link SimGroup}), with the real
 * {@link OracleStateMachine} and a {@link BankServer} in each partition, and group channels that
 * the test ships by hand (or holds). No threads, no time, no Ratis: a group's log is the sequence
 * of entries the test applies to it.
 *
 * <p>A client's multicast is a Start applied to each destination when the test says so (a real
 * client submits it to every destination, in no particular order); a consult is the oracle's
 * read-only query on its applied state, as Ratis's linearizable read answers it.
 */
final class DssmrSim {
  static final GroupId ORACLE = GroupId.valueOf("oracle");
  static final long CLIENT = 7;

  final ClusterConfig cluster;
  final Codec codec;
  final Deliverer.Factory factory;
  final TreeMap<GroupId, SimGroup> groups = new TreeMap<>();
  /** Per channel "from>to": the next sequence number to ship. */
  private final Map<String, Long> sent = new HashMap<>();
  private final Set<String> held = new HashSet<>();
  /** Replies emitted by each message's reply group, in order. */
  final Map<MsgId, CoreReply> replies = new HashMap<>();
  final Map<MsgId, String> errors = new HashMap<>();
  /** Replies that are not a command's (a partition change's table). */
  final Map<MsgId, Object> others = new HashMap<>();
  private long seq;
  private long time = 1;

  DssmrSim(int partitions) {
    this(partitions, new io.eyrie.examples.bank.BankService().get());
  }

  DssmrSim(int partitions, io.eyrie.core.Service service) {
    codec = new Codec(service.registry());
    factory = service.deliverers();
    ClusterConfig.Builder b = ClusterConfig.newBuilder().node(1, "127.0.0.1", 1, 2);
    b.group(ORACLE, ClusterConfig.Kind.ORACLE, List.of(1));
    for (int i = 0; i < partitions; i++) {
      b.group(GroupId.valueOf("p" + i), ClusterConfig.Kind.PARTITION, List.of(1));
    }
    cluster = b.build();
    for (GroupId g : cluster.groupIds()) {
      groups.put(g, fresh(g));
    }
  }

  static GroupId p(int i) {
    return GroupId.valueOf("p" + i);
  }

  private SimGroup fresh(GroupId g) {
    return SimGroup.create(g, cluster, factory, codec, new SimGroup.Replies() {
      @Override
      public void answered(MsgId id, Object v) {
        if (v instanceof CoreReply c) {
          replies.put(id, c);
        } else {
          others.put(id, v); // the oracle's answer to an administrative message (a table)
        }
      }

      @Override
      public void failed(MsgId id, String why) {
        errors.put(id, why);
      }
    });
  }

  /** A new message: its id, destinations (sorted), reply group and payload; not yet applied anywhere. */
  record Msg(MsgId id, GroupId[] dests, GroupId reply, byte[] payload) {}

  Msg msg(Object payload, GroupId reply, GroupId... dests) {
    GroupId[] d = new TreeSet<>(List.of(dests)).toArray(new GroupId[0]);
    return new Msg(MsgId.valueOf(CLIENT, seq++, 0), d, reply, codec.encode(payload));
  }

  /** Applies a message's submission to some of its destinations (the client's request reaching them). */
  void submit(Msg m, GroupId... at) {
    for (GroupId g : at) {
      groups.get(g).submit(time++, m.id(), m.dests(), m.reply(), m.payload());
    }
  }

  /** Applies a message's submission at all its destinations. */
  Msg submitAll(Msg m) {
    submit(m, m.dests());
    return m;
  }

  /**
   * True if {@code from}'s timestamp for message {@code id} reaches {@code to}'s leader: the
   * channel is not held, or it was shipped once {@code from} knew the message (the old
   * protocol's proposal travelled on the channel; the schedules below still say "ship" for it).
   */
  private boolean visible(GroupId from, GroupId to, MsgId id) {
    return !held.contains(from + ">" + to) || revealed.contains(from + ">" + to + ">" + id);
  }

  /** "from>to>id": components revealed by a shipment. */
  private final Set<String> revealed = new HashSet<>();

  void hold(GroupId from, GroupId to) {
    held.add(from + ">" + to);
  }

  void release(GroupId from, GroupId to) {
    held.remove(from + ">" + to);
  }

  /**
   * Ships one batch on a channel if it is not held: the outbox from the last shipped position,
   * with the sender's acknowledgement; the sender's timestamps reach the receiver, whose leader
   * then decides what it can. Returns true if items were delivered or something was decided.
   */
  boolean ship(GroupId from, GroupId to) {
    String key = from + ">" + to;
    if (held.contains(key)) {
      return false;
    }
    SimGroup.Channel pos = groups.get(from).channel(to);
    long start = Math.max(sent.getOrDefault(key, 0L), pos.first());
    List<Object> items = start < pos.next() ? groups.get(from).outbox(to, start, 1024) : List.of();
    groups.get(to).receive(from, start, items, pos.expected());
    sent.put(key, start + items.size());
    // The sender's timestamps reach the receiver too, and its leader decides what it can.
    for (MsgId id : groups.get(from).componentIds()) {
      revealed.add(key + ">" + id);
    }
    boolean decided = SimGroup.decideAt(groups, to, this::visible);
    return !items.isEmpty() || decided;
  }

  /**
   * Ships every channel that is not held, and lets the groups decide (design 4.3.1: a held
   * channel also keeps its sender's timestamps from its receiver), until nothing moves.
   */
  void settle() {
    boolean moved = true;
    while (moved) {
      moved = SimGroup.decideAll(groups, this::visible);
      for (GroupId a : groups.keySet()) {
        for (GroupId b : groups.keySet()) {
          if (!a.equals(b)) {
            moved |= ship(a, b);
          }
        }
      }
    }
  }

  /**
   * Replaces a group's replica by one restored from its snapshot (a new leader after a crash):
   * it resends its outboxes from the oldest unacknowledged item.
   */
  void failOver(GroupId g) {
    groups.put(g, groups.get(g).restoredFromSnapshot());
    sent.keySet().removeIf(k -> k.startsWith(g + ">"));
  }

  /** The oracle's answer to a consult, as a client's linearizable read would get it. */
  Prophecy consult(Command cmd) {
    return (Prophecy) groups.get(ORACLE).app().query(new ConsultReq(cmd));
  }

  /** The oracle's map. */
  TreeMap<io.eyrie.core.ObjId, GroupId> map() {
    return ((OracleMapReply) groups.get(ORACLE).app().query(new StatsReq(true))).locations();
  }

  /** The objects a partition holds. */
  List<Long> held(GroupId partition) {
    long[] ids = ((PartitionStatsReply) groups.get(partition).app().query(new StatsReq(true))).objectIds();
    List<Long> out = new ArrayList<>();
    for (long id : ids) {
      out.add(id);
    }
    return out;
  }
}
