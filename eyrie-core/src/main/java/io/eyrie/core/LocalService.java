package io.eyrie.core;

import io.eyrie.core.protocol.AccessReq;
import io.eyrie.core.protocol.CoreReply;
import io.eyrie.core.protocol.CreateReq;
import io.eyrie.core.protocol.DeleteReq;
import io.eyrie.core.protocol.PartitionStatsReply;
import io.eyrie.core.protocol.ReadReq;
import io.eyrie.core.protocol.StatsReq;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Deliverer;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.MulticastException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A service run in this JVM without a cluster, for unit tests of a {@link StateMachine} and its
 * oracle: one partition and the oracle, executing one command at a time through the same code a
 * cluster runs (the partition server with atomic commands and its checks on created objects, the
 * service's oracle with its hooks), with every command, channel item and reply encoded and decoded
 * by the service's codec, so an unregistered type fails here as it would on a node. Nothing is
 * replicated and nothing moves: what it tests is the application, not the protocol.
 *
 * <pre>{@code
 * LocalService kv = LocalService.of(new KvService().get());
 * assertTrue(kv.create(Command.create(ObjId.valueOf(1), "a")).isOk());
 * assertEquals("a", kv.access(Command.access(new KvOps.Get(), ObjId.valueOf(1))).value());
 * kv.restart(); // the partition's and the oracle's state through a snapshot and back
 * }</pre>
 *
 * <p>Outcomes are those a {@link Client} gets: a {@link Reply} for a decision, and a
 * {@link MulticastException} for a command the application failed on (its writes undone). A
 * command naming an object that does not exist is answered {@code NOT_FOUND}; one whose
 * application asks for more objects is run again with them, as the client proxy does. Not
 * thread-safe: one command at a time.
 */
public final class LocalService {
  private static final GroupId ORACLE = GroupId.valueOf("oracle");
  private static final GroupId PARTITION = GroupId.valueOf("p0");
  private static final ClusterConfig CLUSTER = ClusterConfig.parse("""
      node 1 127.0.0.1 raft=1 client=2
      group oracle oracle 1
      group p0 partition 1
      """);
  /** As the client proxy: a command whose application keeps asking for objects gives up. */
  private static final int MAX_ROUNDS = 16;

  private final Service service;
  private final Codec codec;
  private Deliverer oracle;
  private Deliverer partition;
  private long nextSeq;

  private LocalService(Service service) {
    this.service = service;
    this.codec = new Codec(service.registry());
    this.oracle = service.deliverers().create(ORACLE, CLUSTER, codec);
    this.partition = service.deliverers().create(PARTITION, CLUSTER, codec);
  }

  /**
   * Starts a service locally, from an empty state.
   *
   * @param service the service
   * @return the running service
   */
  public static LocalService of(Service service) {
    return new LocalService(Objects.requireNonNull(service, "service"));
  }

  /** Creates an object ({@link Client#sendCreate}). */
  public Reply create(Command command) {
    check(command, Command.Kind.CREATE);
    return outcome(run(new CreateReq(command, PARTITION), ORACLE, PARTITION), command);
  }

  /** Deletes an object ({@link Client#sendDelete}). */
  public Reply delete(Command command) {
    check(command, Command.Kind.DELETE);
    return outcome(run(new DeleteReq(command, PARTITION), ORACLE, PARTITION), command);
  }

  /** Runs an access command through the log ({@link Client#sendAccess}). */
  public Reply access(Command command) {
    check(command, Command.Kind.ACCESS);
    Command c = command;
    for (int round = 0; round < MAX_ROUNDS; round++) {
      CoreReply r = run(new AccessReq(c), PARTITION);
      if (r.status() != CoreReply.Status.RETRY) {
        return outcome(r, c);
      }
      if (r.extra() == null || r.extra().length == 0) {
        return Reply.notFound(missing(c));
      }
      c = c.withObjects(List.of(r.extra()));
    }
    throw new IllegalStateException("the application kept asking for more objects: " + c.objects().size()
        + " objects after " + MAX_ROUNDS + " rounds");
  }

  /**
   * Runs a read off the log ({@link Client#sendRead}): the partition executes it without
   * logging it, and the application must not change anything in it.
   */
  public Reply read(Command command) {
    check(command, Command.Kind.ACCESS);
    CoreReply r = (CoreReply) roundTrip(partition.query(roundTrip(new ReadReq(command))));
    if (r.status() == CoreReply.Status.RETRY && (r.extra() == null || r.extra().length == 0)) {
      return Reply.notFound(missing(command));
    }
    if (r.status() == CoreReply.Status.RETRY || r.status() == CoreReply.Status.BUSY) {
      // A cluster's client sends it through the log then, as this does.
      return access(command);
    }
    return outcome(r, command);
  }

  /** Returns the ids of the objects the partition holds, in order. */
  public List<ObjId> objectIds() {
    PartitionStatsReply s = (PartitionStatsReply) partition.query(new StatsReq(true));
    List<ObjId> out = new ArrayList<>();
    for (long id : s.objectIds()) {
      out.add(ObjId.valueOf(id));
    }
    out.sort(null);
    return out;
  }

  /**
   * Takes a snapshot of the partition and the oracle and carries on from fresh instances
   * restored from it, as a replica that restarts or installs a snapshot does: what a test sees
   * afterwards is what survives a snapshot (objects whose classes do not encode, or state
   * kept outside the objects, show up here).
   */
  public void restart() {
    byte[] o = oracle.snapshot();
    byte[] p = partition.snapshot();
    oracle = service.deliverers().create(ORACLE, CLUSTER, codec);
    partition = service.deliverers().create(PARTITION, CLUSTER, codec);
    oracle.restore(o);
    partition.restore(p);
  }

  private static void check(Command c, Command.Kind kind) {
    if (c == null || c.kind() != kind) {
      throw new IllegalArgumentException("expected a " + kind + " command, got " + (c == null ? null : c.kind()));
    }
  }

  private Object roundTrip(Object o) {
    return codec.decode(codec.encode(o));
  }

  /** The first of the command's objects that the partition does not hold. */
  private ObjId missing(Command c) {
    Set<ObjId> held = new TreeSet<>(objectIds());
    for (ObjId id : c.objects()) {
      if (!held.contains(id)) {
        return id;
      }
    }
    return c.objects().first();
  }

  private static Reply outcome(CoreReply r, Command c) {
    return switch (r.status()) {
      case OK -> Reply.ok(r.value());
      case NOT_FOUND -> Reply.notFound(r.extra()[0]);
      case EXISTS -> Reply.exists(r.extra()[0]);
      case REFUSED -> Reply.refused(String.valueOf(r.value()));
      case RETRY, BUSY -> throw new IllegalStateException("unexpected reply status " + r.status() + " to " + c.kind()
          + " of " + c.objects());
    };
  }

  /**
   * Delivers one message to the given groups (the last answers) and runs it to its end: each
   * group's items reach the others, and a group that waits is resumed once an item from each
   * group it waits for is in, as the execution queue does.
   */
  private CoreReply run(Object payload, GroupId... dests) {
    MsgId id = new MsgId(1, ++nextSeq, 0);
    GroupId reply = dests[dests.length - 1];
    byte[] bytes = codec.encode(payload);
    Map<GroupId, Ctx> ctxs = new TreeMap<>();
    for (GroupId g : dests) {
      ctxs.put(g, new Ctx(id, g, reply, List.of(dests).stream().sorted().toList(), bytes, ctxs, new TreeMap<>(), codec));
    }
    Map<GroupId, Execution> waiting = new TreeMap<>();
    Object answer = null;
    boolean answered = false;
    List<GroupId> toDeliver = new ArrayList<>(ctxs.keySet());
    for (int step = 0; step < 1000; step++) {
      GroupId g = null;
      Execution e;
      if (!toDeliver.isEmpty()) {
        g = toDeliver.remove(0);
        e = execute(g, ctxs.get(g), true);
      } else {
        for (Map.Entry<GroupId, Execution> w : waiting.entrySet()) {
          if (ctxs.get(w.getKey()).hasFromEach(w.getValue().awaited())) {
            g = w.getKey();
            break;
          }
        }
        if (g == null) {
          if (!waiting.isEmpty()) {
            throw new IllegalStateException("message " + id + " is stuck: " + describe(waiting));
          }
          break;
        }
        e = execute(g, ctxs.get(g), false);
        waiting.remove(g);
      }
      if (e.isBlocked()) {
        throw new IllegalStateException(g + " answered blocked with nothing else in progress");
      }
      if (e.isAwait() || e.isResumeLater()) {
        waiting.put(g, e);
      } else if (g.equals(reply)) {
        if (e.isError()) {
          throw new MulticastException(io.eyrie.multicast.Status.ERROR, e.errorMessage());
        }
        answer = e.replyValue();
        answered = true;
      }
    }
    if (!answered) {
      throw new IllegalStateException(reply + " ended message " + id + " without a reply");
    }
    return (CoreReply) roundTrip(answer);
  }

  /** Delivers or resumes as a group's execution queue does: what the deliverer throws is an error. */
  private Execution execute(GroupId g, Ctx ctx, boolean first) {
    Deliverer d = g.equals(ORACLE) ? oracle : partition;
    try {
      Execution e = first ? d.deliver(ctx) : d.resume(ctx);
      return e == null ? Execution.done() : e;
    } catch (VirtualMachineError e) {
      throw e;
    } catch (Throwable t) {
      return Execution.error("application error: " + t);
    }
  }

  private static String describe(Map<GroupId, Execution> waiting) {
    StringBuilder b = new StringBuilder();
    waiting.forEach((g, e) -> b.append(g).append(" waits for ").append(e.awaited()).append("; "));
    return b.toString();
  }

  /**
   * One message at one group: its payload, what the other groups sent it ({@code inbox}, by
   * sender), and where its sends go ({@code all}, every destination's context).
   */
  private record Ctx(MsgId id, GroupId group, GroupId replyGroup, List<GroupId> dests, byte[] bytes,
      Map<GroupId, Ctx> all, Map<GroupId, List<byte[]>> inbox, Codec codec) implements ExecutionContext {

    boolean hasFromEach(Set<GroupId> groups) {
      for (GroupId g : groups) {
        if (inbox.getOrDefault(g, List.of()).isEmpty()) {
          return false;
        }
      }
      return true;
    }

    @Override
    public byte[] payloadBytes() {
      return bytes.clone();
    }

    @Override
    public Object payload() {
      return codec.decode(bytes);
    }

    @Override
    public long logTime() {
      return 0;
    }

    @Override
    public void send(GroupId to, Object item) {
      sendEncoded(to, codec.encode(item));
    }

    @Override
    public void sendEncoded(GroupId to, byte[] encoded) {
      Ctx target = all.get(to);
      if (target == null || to.equals(group)) {
        throw new IllegalArgumentException(group + " cannot send to " + to + ", which is not another destination");
      }
      codec.decode(encoded); // as a cluster's context checks it
      target.inbox.computeIfAbsent(group, k -> new ArrayList<>()).add(encoded);
    }

    @Override
    public List<Object> received(GroupId from) {
      List<Object> out = new ArrayList<>();
      for (byte[] b : inbox.getOrDefault(from, List.of())) {
        out.add(codec.decode(b));
      }
      return out;
    }

    @Override
    public List<GroupId> partitions() {
      return List.of(PARTITION);
    }

    // Each context is one message at one group, and they refer to each other through all: the
    // record's generated equality, hash and string would recurse through it.
    @Override
    public boolean equals(Object o) {
      return this == o;
    }

    @Override
    public int hashCode() {
      return System.identityHashCode(this);
    }

    @Override
    public String toString() {
      return id + " at " + group;
    }
  }
}
