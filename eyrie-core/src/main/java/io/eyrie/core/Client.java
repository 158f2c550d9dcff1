package io.eyrie.core;

import io.eyrie.core.protocol.Locations;
import io.eyrie.core.protocol.Msgs;
import io.eyrie.core.protocol.Msgs.CoreReply;
import io.eyrie.core.protocol.Msgs.Prophecy;
import io.eyrie.multicast.CallTimeoutException;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.CodecRegistry;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MulticastClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The DS-SMR client proxy (the paper's Algorithm 2): sends commands to the partitions that hold
 * their objects, using a location cache and consulting the oracle on a miss, after a retry, and
 * (in DS-SMR) when the cached locations of a command's objects are in several partitions;
 * moves the objects of a multi-partition command to one partition first; retries when told to;
 * and after {@link Builder#retryThreshold} retries executes the command with S-SMR on every
 * partition, so every command terminates.
 *
 * <p>In {@link Mode#SSMR} the proxy never moves objects: a multi-partition command is executed
 * by all its partitions with S-SMR execution atomicity (the paper's baseline).
 *
 * <p>Thread-safe; all methods are asynchronous and never throw.
 *
 * <p><b>Outcomes.</b> A command's future completes with a {@link Reply} when the command reached
 * a decision: {@link Reply.Status#OK} (executed once) or a status that says why it changed nothing.
 * It fails with:
 * <ul>
 *   <li>{@link io.eyrie.multicast.CallTimeoutException}: the outcome is <b>unknown</b>. The
 *       command had no answer within the total timeout ({@link Builder#totalTimeoutMs}, which
 *       bounds the whole command: consults, moves, retries and fallback), or, as the subclass
 *       {@link io.eyrie.multicast.ClientExpiredException}, a group forgot this proxy's client
 *       records and cannot tell whether it executed a resent message. The command, or a move it
 *       caused, may have taken effect or may still take effect: read the state back before
 *       retrying anything that is not idempotent.</li>
 *   <li>{@link io.eyrie.multicast.MulticastException}: the cluster answered with a definite
 *       refusal (a malformed request, an exception in the application's code); the command did
 *       not take effect (the writes the application made before it threw are undone).</li>
 *   <li>{@link IllegalArgumentException}: refused here before anything was sent (a command of
 *       the wrong kind); {@link IllegalStateException}: the application kept asking for more
 *       objects through S-SMR rounds. Neither took effect.</li>
 * </ul>
 * The proxy keeps its client incarnation after EXPIRED: groups refuse that way only resends of
 * messages they had seen before the expiry, never a new message, so a new incarnation would not
 * help.
 *
 * <pre>{@code
 * try (Client client = Client.newBuilder().cluster(cluster).service(bank).build()) {
 *   client.sendCreate(Command.create(ObjId.valueOf(1), 100L)).join();
 *   Reply r = client.sendAccess(Command.access(new Transfer(1, 2, 10), ObjId.valueOf(1), ObjId.valueOf(2))).join();
 * }
 * }</pre>
 */
public final class Client implements AutoCloseable {

  /** How multi-partition commands are executed. */
  public enum Mode {
    /** Move objects to one partition, then execute there (DS-SMR). */
    DSSMR,
    /** Never move; execute with S-SMR on every involved partition (the baseline). */
    SSMR
  }

  private static final int MAX_FALLBACK_ROUNDS = 16;

  private final MulticastClient mc;
  private final long totalTimeoutMs;
  private final ScheduledExecutorService timer;
  private final Mode mode;
  private final int retryThreshold;
  private final GroupId oracle;
  private final ConcurrentHashMap<ObjId, GroupId> cache = new ConcurrentHashMap<>();
  private final AtomicLong commands = new AtomicLong();
  private final AtomicLong cacheHits = new AtomicLong();
  private final AtomicLong consults = new AtomicLong();
  private final AtomicLong moves = new AtomicLong();
  private final AtomicLong movedObjects = new AtomicLong();
  private final AtomicLong retries = new AtomicLong();
  private final AtomicLong fallbacks = new AtomicLong();
  private final AtomicLong multiPartition = new AtomicLong();
  private final AtomicLong direct = new AtomicLong();
  private final AtomicLong reads = new AtomicLong();

  private Client(Builder b) {
    this.mode = b.mode;
    this.retryThreshold = b.retryThreshold;
    this.oracle = Objects.requireNonNull(b.cluster.oracle(), "the cluster needs an oracle group");
    if (b.cluster.partitions().isEmpty()) {
      throw new IllegalArgumentException("the cluster has no partition");
    }
    this.totalTimeoutMs = b.totalTimeoutMs;
    // One multicast never needs longer than the whole command may take; the margin lets the
    // command's own deadline (which names the command) fire first.
    MulticastClient.Builder mb = MulticastClient.newBuilder().cluster(b.cluster).registry(b.registry)
        .totalTimeoutMs(b.totalTimeoutMs + 1000);
    if (b.attemptTimeoutMs > 0) {
      mb.attemptTimeoutMs(b.attemptTimeoutMs);
    }
    mb.resendListener(b.resendListener);
    this.mc = mb.build();
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "eyrie-client-deadlines");
      t.setDaemon(true);
      return t;
    });
  }

  /** Returns a builder. */
  public static Builder newBuilder() {
    return new Builder();
  }

  /** Returns the execution mode. */
  public Mode mode() {
    return mode;
  }

  /** Returns this proxy's counters. */
  public ClientStats stats() {
    return new ClientStats(commands.get(), cacheHits.get(), consults.get(), moves.get(), movedObjects.get(),
        retries.get(), fallbacks.get(), multiPartition.get(), direct.get(), reads.get());
  }

  /** Returns the cached location of an object, or null. */
  public GroupId cachedLocation(ObjId id) {
    return cache.get(id);
  }

  /**
   * Forgets every cached location, so that the next command on each object consults the oracle
   * (for tests that move objects behind this client's back; a stale entry only costs a retry).
   */
  public void clearLocationCache() {
    cache.clear();
  }

  /**
   * Creates an object.
   *
   * @param command a {@link Command.Kind#CREATE} command
   * @return ok, or nok if the object exists already
   */
  public CompletableFuture<Reply> sendCreate(Command command) {
    return send(command, Command.Kind.CREATE, null);
  }

  /**
   * Executes an access command.
   *
   * @param command a {@link Command.Kind#ACCESS} command
   * @return ok with the application's reply, or nok if an object does not exist
   */
  public CompletableFuture<Reply> sendAccess(Command command) {
    return send(command, Command.Kind.ACCESS, null);
  }

  /**
   * Deletes an object.
   *
   * @param command a {@link Command.Kind#DELETE} command
   * @return ok, or nok if the object does not exist
   */
  public CompletableFuture<Reply> sendDelete(Command command) {
    return send(command, Command.Kind.DELETE, null);
  }

  /**
   * Executes an access command that changes nothing, usually without a log entry: when the
   * objects are (as far as this proxy knows) in one partition, that partition's leader executes
   * it on its replica once it has applied everything committed before (a linearizable read), if
   * no command in progress there holds or waits for one of the objects. Otherwise, or if the
   * partition cannot serve it now, the command is sent as {@link #sendAccess(Command)} sends it.
   * Either way it is linearizable, as an access is. The application's
   * {@link StateMachine#executeCommand} must not change any object for such a command: it runs on
   * one replica only, and a change would make the replicas differ.
   *
   * @param command a {@link Command.Kind#ACCESS} command that only reads
   * @return as {@link #sendAccess(Command)}
   */
  public CompletableFuture<Reply> sendRead(Command command) {
    return send(command, Command.Kind.ACCESS, null, true);
  }

  /** As {@link #sendRead(Command)}, reporting to a callback handler. */
  public void sendRead(Command command, CallbackHandler handler) {
    callback(send(command, Command.Kind.ACCESS, handler, true), handler);
  }

  /** As {@link #sendCreate(Command)}, reporting to a callback handler. */
  public void sendCreate(Command command, CallbackHandler handler) {
    callback(send(command, Command.Kind.CREATE, handler), handler);
  }

  /** As {@link #sendAccess(Command)}, reporting to a callback handler. */
  public void sendAccess(Command command, CallbackHandler handler) {
    callback(send(command, Command.Kind.ACCESS, handler), handler);
  }

  /** As {@link #sendDelete(Command)}, reporting to a callback handler. */
  public void sendDelete(Command command, CallbackHandler handler) {
    callback(send(command, Command.Kind.DELETE, handler), handler);
  }

  private static void callback(CompletableFuture<Reply> f, CallbackHandler h) {
    f.whenComplete((r, e) -> {
      if (e != null) {
        h.failed(e instanceof CompletionException && e.getCause() != null ? e.getCause() : e);
      } else {
        h.done(r);
      }
    });
  }

  private CompletableFuture<Reply> send(Command command, Command.Kind kind, CallbackHandler handler) {
    return send(command, kind, handler, false);
  }

  private CompletableFuture<Reply> send(Command command, Command.Kind kind, CallbackHandler handler, boolean read) {
    if (command == null || command.kind() != kind) {
      return CompletableFuture.failedFuture(new IllegalArgumentException("expected a " + kind + " command, got "
          + command));
    }
    commands.incrementAndGet();
    Attempt a = new Attempt(command, handler, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(totalTimeoutMs));
    a.read = read;
    CompletableFuture<Reply> result = new CompletableFuture<>();
    // The timeout bounds the whole command, however many consults, moves and retries it takes.
    ScheduledFuture<?> deadline = timer.schedule(() -> result.completeExceptionally(unknown(a)),
        totalTimeoutMs, TimeUnit.MILLISECONDS);
    CompletableFuture<Reply> run;
    try {
      run = attempt(a);
    } catch (RuntimeException e) {
      run = CompletableFuture.failedFuture(e);
    }
    run.whenComplete((r, e) -> {
      deadline.cancel(false);
      if (e != null) {
        result.completeExceptionally(e instanceof CompletionException && e.getCause() != null ? e.getCause() : e);
      } else {
        result.complete(r);
      }
    });
    return result;
  }

  private CallTimeoutException unknown(Attempt a) {
    return new CallTimeoutException(null, "outcome unknown: " + a.cmd + " had no answer within "
        + totalTimeoutMs + " ms (after " + a.retries + " retries); it may or may not take effect");
  }

  /** The mutable progress of one command through its retries. */
  private static final class Attempt {
    Command cmd;
    final CallbackHandler handler;
    final long deadlineNanos;
    int retries;
    int fallbackRounds;
    boolean moved;
    /** A read that a partition may still serve off the log (cleared once one answered BUSY). */
    boolean read;

    Attempt(Command cmd, CallbackHandler handler, long deadlineNanos) {
      this.cmd = cmd;
      this.handler = handler;
      this.deadlineNanos = deadlineNanos;
    }
  }

  private CompletableFuture<Reply> attempt(Attempt a) {
    if (System.nanoTime() - a.deadlineNanos > 0) {
      return CompletableFuture.failedFuture(unknown(a)); // no new step once the command's time is up
    }
    if (a.retries >= retryThreshold) {
      return fallback(a);
    }
    return locate(a).thenCompose(p -> {
      if (p.status() == Msgs.NOK) {
        // The consult settles the command: the oracle names the object it found or missed.
        ObjId subject = p.subject() != null ? p.subject() : a.cmd.target();
        return CompletableFuture.completedFuture(a.cmd.kind() == Command.Kind.CREATE
            ? Reply.exists(subject) : Reply.notFound(subject));
      }
      if (p.status() == Msgs.OK) {
        return CompletableFuture.completedFuture(Reply.ok(null));
      }
      CompletableFuture<CoreReply> sent = switch (a.cmd.kind()) {
        case CREATE -> call(Set.of(oracle, p.target()), p.target(), new Msgs.CreateReq(a.cmd, p.target()));
        case DELETE -> call(Set.of(oracle, p.target()), p.target(), new Msgs.DeleteReq(a.cmd, p.target()));
        case ACCESS -> access(a, p);
      };
      return sent.thenCompose(r -> outcome(a, r));
    });
  }

  private CompletableFuture<CoreReply> access(Attempt a, Prophecy p) {
    TreeSet<GroupId> where = new TreeSet<>(p.locations().values());
    if (where.size() == 1) {
      GroupId g = where.first();
      if (a.read) {
        return read(a, g);
      }
      return call(Set.of(g), g, new Msgs.AccessReq(a.cmd));
    }
    a.moved = true;
    GroupId target = p.target();
    if (mode == Mode.SSMR || target == null) {
      // S-SMR by choice, or because the oracle sees no locality worth moving objects for.
      multiPartition.incrementAndGet();
      return call(where, where.first(), new Msgs.SsmrReq(a.cmd));
    }
    TreeMap<GroupId, List<ObjId>> bySource = new TreeMap<>();
    p.locations().forEach((id, g) -> {
      if (!g.equals(target)) {
        bySource.computeIfAbsent(g, k -> new ArrayList<>()).add(id);
      }
    });
    List<CompletableFuture<CoreReply>> sent = new ArrayList<>();
    for (Map.Entry<GroupId, List<ObjId>> e : bySource.entrySet()) {
      moves.incrementAndGet();
      movedObjects.addAndGet(e.getValue().size());
      Msgs.MoveReq m = new Msgs.MoveReq(e.getValue().toArray(new ObjId[0]), e.getKey(), target);
      sent.add(call(new TreeSet<>(List.of(oracle, e.getKey(), target)), target, m));
    }
    // Moves must be ordered before the command at the target, so wait for them (a command sent
    // at once would be ordered first, since a single-group message needs no timestamp exchange).
    return CompletableFuture.allOf(sent.toArray(new CompletableFuture[0])).thenCompose(v -> {
      p.locations().keySet().forEach(id -> cache.put(id, target));
      return call(Set.of(target), target, new Msgs.AccessReq(a.cmd));
    });
  }

  /**
   * Asks the partition to serve a read off the log. OK and RETRY are answers as from the log; if
   * the partition is busy with the objects, or the query fails (no leader, a timeout), the command
   * goes through the log, in this attempt and every later one.
   */
  private CompletableFuture<CoreReply> read(Attempt a, GroupId g) {
    return mc.query(g, new Msgs.ReadReq(a.cmd)).handle((o, e) -> {
      if (e == null && o instanceof CoreReply r && (r.status() == Msgs.OK || r.status() == Msgs.RETRY)) {
        if (r.status() == Msgs.OK) {
          reads.incrementAndGet();
        }
        return CompletableFuture.completedFuture(r);
      }
      a.read = false;
      if (System.nanoTime() - a.deadlineNanos > 0) {
        return CompletableFuture.<CoreReply>failedFuture(unknown(a)); // the caller has its answer already
      }
      return call(Set.of(g), g, new Msgs.AccessReq(a.cmd));
    }).thenCompose(f -> f);
  }

  private CompletableFuture<Prophecy> locate(Attempt a) {
    if (a.retries == 0 && a.cmd.kind() == Command.Kind.ACCESS) {
      TreeMap<ObjId, GroupId> where = new TreeMap<>();
      for (ObjId id : a.cmd.objects()) {
        GroupId g = cache.get(id);
        if (g == null) {
          where = null;
          break;
        }
        where.put(id, g);
      }
      // In DS-SMR a command whose cached objects are spread over partitions would move some of
      // them. The oracle chooses where to gather them (the application's rule) and knows where
      // they are now (the cache is often stale when objects move), so ask it first: the
      // consult costs one read-only query, a wrong move a multi-group multicast and a retry.
      if (where != null && mode == Mode.DSSMR && new java.util.HashSet<>(where.values()).size() > 1) {
        where = null;
      }
      if (where != null) {
        cacheHits.incrementAndGet();
        return CompletableFuture.completedFuture(new Prophecy(Msgs.RETRY, where, Locations.mostCommon(where)));
      }
    }
    consults.incrementAndGet();
    return mc.query(oracle, new Msgs.ConsultReq(a.cmd)).thenApply(o -> {
      Prophecy p = (Prophecy) o;
      if (p.locations() != null) {
        cache.putAll(p.locations());
      }
      if (p.status() == Msgs.NOK || p.status() == Msgs.OK) {
        a.cmd.objects().forEach(cache::remove);
      }
      return p;
    });
  }

  private CompletableFuture<Reply> outcome(Attempt a, CoreReply r) {
    switch (r.status()) {
      case Msgs.OK:
        if (a.retries == 0 && !a.moved) {
          direct.incrementAndGet();
        }
        if (a.cmd.kind() == Command.Kind.CREATE || a.cmd.kind() == Command.Kind.DELETE) {
          cache.remove(a.cmd.target());
        }
        return CompletableFuture.completedFuture(Reply.ok(r.value()));
      case Msgs.NOT_FOUND:
        return CompletableFuture.completedFuture(Reply.notFound(r.extra()[0]));
      case Msgs.EXISTS:
        return CompletableFuture.completedFuture(Reply.exists(r.extra()[0]));
      case Msgs.REFUSED:
        return CompletableFuture.completedFuture(Reply.refused(String.valueOf(r.value())));
      case Msgs.RETRY:
        retries.incrementAndGet();
        a.retries++;
        if (r.extra() != null && r.extra().length > 0) {
          a.cmd = a.cmd.withObjects(List.of(r.extra()));
        }
        if (a.handler != null) {
          a.handler.error(a.cmd, a.retries);
        }
        return attempt(a);
      default:
        return CompletableFuture.failedFuture(new IllegalStateException("unknown reply status " + r.status()));
    }
  }

  private CompletableFuture<Reply> fallback(Attempt a) {
    if (System.nanoTime() - a.deadlineNanos > 0) {
      return CompletableFuture.failedFuture(unknown(a));
    }
    a.moved = true;
    if (a.fallbackRounds++ == 0) {
      fallbacks.incrementAndGet();
    }
    if (a.fallbackRounds > MAX_FALLBACK_ROUNDS) {
      return CompletableFuture.failedFuture(new IllegalStateException("the application kept asking for more objects: "
          + a.cmd.objects().size() + " objects after " + MAX_FALLBACK_ROUNDS + " S-SMR rounds"));
    }
    List<GroupId> partitions = partitions();
    TreeSet<GroupId> dests = new TreeSet<>(partitions);
    dests.add(oracle);
    multiPartition.incrementAndGet();
    return call(dests, partitions.get(0), new Msgs.SsmrReq(a.cmd)).thenCompose(r -> {
      if (r.status() == Msgs.RETRY) {
        retries.incrementAndGet();
        if (r.extra() != null) {
          a.cmd = a.cmd.withObjects(List.of(r.extra()));
        } else {
          // Refused for missing a partition added to the running cluster: learn it first.
          return mc.refreshView().handle((v, e) -> v).thenCompose(v -> fallback(a));
        }
        if (a.handler != null) {
          a.handler.error(a.cmd, ++a.retries);
        }
        return fallback(a);
      }
      return outcome(a, r);
    });
  }

  private CompletableFuture<CoreReply> call(Set<GroupId> dests, GroupId replyGroup, Object payload) {
    return mc.multicast(dests, replyGroup, payload).thenApply(o -> (CoreReply) o);
  }

  /**
   * Returns the partitions this client knows, ascending: the cluster file's and those added to
   * the running cluster that it has learned (see {@link MulticastClient#refreshView}).
   */
  public List<GroupId> partitions() {
    return mc.cluster().partitions();
  }

  /**
   * Reads the oracle's partition table: which partitions are active or retired, and how many
   * objects each holds.
   *
   * @return the table
   */
  public CompletableFuture<PartitionTable> partitionTable() {
    return mc.query(oracle, new Msgs.PartitionTableReq()).thenApply(o -> (PartitionTable) o);
  }

  /**
   * Makes a partition active in the oracle's table, so that new objects and gathered ones go
   * there too (and, with the learned placement, the rebalancer spreads objects into it). The
   * partition's group must exist: add a new one to the running cluster first with
   * {@link io.eyrie.multicast.ClusterAdmin#addGroup}. Also re-activates a retired partition.
   *
   * @param partition the partition
   * @return the new table
   */
  public CompletableFuture<PartitionTable> addPartition(GroupId partition) {
    return changePartition(partition, true);
  }

  /**
   * Retires a partition: the oracle places nothing new there, and the rebalancer's plan moves
   * its objects to the active partitions ({@link #drain} does that at once). Refused for the
   * last active partition.
   *
   * @param partition the partition
   * @return the new table
   */
  public CompletableFuture<PartitionTable> retirePartition(GroupId partition) {
    return changePartition(partition, false);
  }

  private CompletableFuture<PartitionTable> changePartition(GroupId partition, boolean active) {
    Objects.requireNonNull(partition, "partition");
    return changePartition(partition, active, 3);
  }

  /**
   * Sends a partition change to the oracle and every partition this client knows (each learns
   * the table it leaves); if the oracle's table holds a partition this client has not learned,
   * learns the cluster again and resends.
   */
  private CompletableFuture<PartitionTable> changePartition(GroupId partition, boolean active, int tries) {
    TreeSet<GroupId> dests = new TreeSet<>(partitions());
    dests.add(oracle);
    dests.add(partition);
    return mc.multicast(dests, oracle, new Msgs.PartitionChange(partition, active))
        .thenApply(o -> (PartitionTable) o)
        .exceptionallyCompose(e -> {
          Throwable c = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
          if (tries > 1 && String.valueOf(c.getMessage()).contains("learn the cluster again")) {
            return mc.refreshView().handle((v, x) -> v).thenCompose(v -> changePartition(partition, active, tries - 1));
          }
          return CompletableFuture.failedFuture(c);
        });
  }

  /**
   * Retires a partition and moves all its objects to the active partitions, {@code batch}
   * objects per move round, through the ordinary linearizable moves, while commands go on.
   * Completes when the oracle places no object there any more: the partition is drained, which
   * is complete (every object moved out has arrived at its destination: the map follows a move
   * only then) and stable (no move brings objects into a retired partition, and nothing new is
   * placed there). Its group must keep running, empty (removing a group is not supported). Fails
   * after {@code timeout}.
   *
   * @param partition the partition to empty
   * @param batch the most objects per round
   * @param timeout how long to try
   * @return the final table
   */
  public CompletableFuture<PartitionTable> drain(GroupId partition, int batch, java.time.Duration timeout) {
    if (batch <= 0) {
      throw new IllegalArgumentException("batch must be positive: " + batch);
    }
    long deadline = System.nanoTime() + timeout.toNanos();
    return retirePartition(partition).thenCompose(t -> drainRound(partition, batch, deadline, t));
  }

  private CompletableFuture<PartitionTable> drainRound(GroupId partition, int batch, long deadline, PartitionTable t) {
    if (t.drained(partition)) {
      return CompletableFuture.completedFuture(t);
    }
    if (System.nanoTime() - deadline > 0) {
      return CompletableFuture.failedFuture(new java.util.concurrent.TimeoutException(
          "partition " + partition + " still holds " + t.objectsAt(partition) + " objects"));
    }
    // A round that moves nothing (its objects wait for a create or delete) pauses a little.
    return rebalance(batch).thenCompose(n -> n > 0 ? CompletableFuture.completedFuture(n) : delay(100))
        .handle((n, e) -> null)
        .thenCompose(x -> partitionTable())
        .thenCompose(next -> drainRound(partition, batch, deadline, next));
  }

  private CompletableFuture<Integer> delay(long ms) {
    CompletableFuture<Integer> f = new CompletableFuture<>();
    timer.schedule(() -> f.complete(0), ms, TimeUnit.MILLISECONDS);
    return f;
  }

  /**
   * Reads a partition's counters.
   *
   * @param partition the partition
   * @return its counters
   */
  public CompletableFuture<PartitionStats> partitionStats(GroupId partition) {
    return mc.query(partition, new Msgs.StatsReq(false)).thenApply(o -> {
      Msgs.PartitionStatsReply r = (Msgs.PartitionStatsReply) o;
      return new PartitionStats(r.objects(), r.executed(), r.multiPartition(), r.retries());
    });
  }

  /**
   * Asks the oracle where an object lives (for operators and tests: commands find their objects
   * themselves). Reads the oracle's whole map, so it is not for a hot path.
   *
   * @param id the object
   * @return the partition the oracle places it in, or null if the oracle does not know it
   */
  public CompletableFuture<GroupId> locationOf(ObjId id) {
    return mc.query(oracle, new Msgs.StatsReq(true)).thenApply(m -> ((Msgs.OracleMapReply) m).locations().get(id));
  }

  /**
   * Hands the oracle what each partition sampled of its single-partition commands (see
   * {@link Msgs.SamplesReq}); a partition that does not answer is skipped this round.
   */
  private CompletableFuture<Void> observeSamples() {
    List<CompletableFuture<Void>> all = new ArrayList<>();
    for (GroupId p : mc.cluster().partitions()) {
      all.add(mc.query(p, new Msgs.SamplesReq()).thenCompose(o -> {
        Msgs.Observed s = (Msgs.Observed) o;
        return s.accesses().isEmpty() ? CompletableFuture.completedFuture(null)
            : mc.query(oracle, s).thenApply(x -> (Void) null);
      }).exceptionally(e -> null));
    }
    return CompletableFuture.allOf(all.toArray(new CompletableFuture[0]));
  }

  /**
   * Moves up to {@code max} objects to where the oracle's learned plan wants them (an oracle
   * with {@code Placement.GRAPH}; with another oracle nothing moves), through the ordinary
   * linearizable move path: one move per source and target partition. Used by
   * {@link Rebalancer}; commands running meanwhile are not disturbed beyond a retry.
   *
   * @param max the most objects to move in this round
   * @return how many objects the moves covered
   */
  public CompletableFuture<Integer> rebalance(int max) {
    return observeSamples().thenCompose(v -> mc.query(oracle, new Msgs.PlanReq(max))).thenCompose(o -> {
      Msgs.PlanMoves plan = (Msgs.PlanMoves) o;
      TreeMap<List<GroupId>, List<ObjId>> byPair = new TreeMap<>(
          java.util.Comparator.<List<GroupId>, GroupId>comparing(l -> l.get(0)).thenComparing(l -> l.get(1)));
      plan.from().forEach((id, src) -> {
        GroupId dst = plan.to().get(id);
        if (dst != null && !dst.equals(src)) {
          byPair.computeIfAbsent(List.of(src, dst), k -> new ArrayList<>()).add(id);
        }
      });
      List<CompletableFuture<Void>> sent = new ArrayList<>();
      int[] count = new int[1];
      byPair.forEach((pair, ids) -> {
        count[0] += ids.size();
        sent.add(moveInPieces(ids, pair.get(0), pair.get(1)));
        ids.forEach(cache::remove);
      });
      return CompletableFuture.allOf(sent.toArray(new CompletableFuture[0])).thenApply(v -> count[0]);
    });
  }

  /**
   * Moves objects from one partition to another; if their values together are more than one
   * channel item carries, moves each half alone (an object alone always fits: a partition keeps
   * none larger), so that a drain or a plan never stalls on a batch of large objects. Any other
   * failure ends the round: the next plan asks again.
   */
  private CompletableFuture<Void> moveInPieces(List<ObjId> ids, GroupId src, GroupId dst) {
    moves.incrementAndGet();
    movedObjects.addAndGet(ids.size());
    Msgs.MoveReq m = new Msgs.MoveReq(ids.toArray(new ObjId[0]), src, dst);
    return call(new TreeSet<>(List.of(oracle, src, dst)), dst, m).handle((r, e) -> {
      Throwable c = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
      if (c != null && ids.size() > 1 && String.valueOf(c.getMessage()).contains("larger than a channel takes")) {
        int h = ids.size() / 2;
        return moveInPieces(ids.subList(0, h), src, dst).thenCompose(x -> moveInPieces(ids.subList(h, ids.size()), src, dst));
      }
      return CompletableFuture.<Void>completedFuture(null);
    }).thenCompose(f -> f);
  }

  /**
   * Compares the oracle's map with the partitions' contents and reports every object that is
   * missing, duplicated, misplaced or unknown to the oracle. Asks a node for the cluster's view
   * first, so partitions added to the running cluster are audited too.
   *
   * @return the report
   */
  public CompletableFuture<AuditReport> audit() {
    return mc.refreshView().handle((v, e) -> v).thenCompose(v -> auditKnown());
  }

  private CompletableFuture<AuditReport> auditKnown() {
    CompletableFuture<Object> map = mc.query(oracle, new Msgs.StatsReq(true));
    List<CompletableFuture<Object>> held = new ArrayList<>();
    List<GroupId> partitions = partitions();
    for (GroupId g : partitions) {
      held.add(mc.query(g, new Msgs.StatsReq(true)));
    }
    return CompletableFuture.allOf(held.toArray(new CompletableFuture[0])).thenCombine(map, (v, m) -> {
      TreeMap<ObjId, GroupId> where = ((Msgs.OracleMapReply) m).locations();
      TreeMap<ObjId, List<GroupId>> holders = new TreeMap<>();
      Map<String, Integer> per = new TreeMap<>();
      for (int i = 0; i < partitions.size(); i++) {
        long[] ids = ((Msgs.PartitionStatsReply) held.get(i).join()).objectIds();
        per.put(partitions.get(i).name(), ids.length);
        for (long id : ids) {
          holders.computeIfAbsent(ObjId.valueOf(id), k -> new ArrayList<>()).add(partitions.get(i));
        }
      }
      List<ObjId> missing = new ArrayList<>();
      List<ObjId> duplicated = new ArrayList<>();
      List<ObjId> misplaced = new ArrayList<>();
      List<ObjId> unknown = new ArrayList<>();
      where.forEach((id, g) -> {
        List<GroupId> h = holders.get(id);
        if (h == null) {
          missing.add(id);
        } else if (!h.contains(g)) {
          misplaced.add(id);
        }
      });
      holders.forEach((id, h) -> {
        if (h.size() > 1) {
          duplicated.add(id);
        }
        if (!where.containsKey(id)) {
          unknown.add(id);
        }
      });
      return new AuditReport(where.size(), missing, duplicated, misplaced, unknown, per);
    });
  }

  @Override
  public void close() {
    timer.shutdownNow();
    mc.close();
  }

  /** Builds a {@link Client}. */
  public static final class Builder {
    private ClusterConfig cluster;
    private CodecRegistry registry;
    private Mode mode = Mode.DSSMR;
    private int retryThreshold = 3;
    private long totalTimeoutMs = 30_000;
    private long attemptTimeoutMs;
    private io.eyrie.multicast.ResendListener resendListener;

    private Builder() {}

    /** Sets the cluster (required; it must have an oracle group). */
    public Builder cluster(ClusterConfig c) {
      this.cluster = c;
      return this;
    }

    /** Sets the service this client calls: its types are how commands and replies are encoded. */
    public Builder service(Service s) {
      this.registry = s.registry();
      return this;
    }

    /**
     * Sets the codec registry, which must hold eyrie-core's classes ({@link Eyrie#registry()});
     * prefer {@link #service}, which cannot disagree with the nodes'.
     */
    public Builder registry(CodecRegistry r) {
      this.registry = r;
      return this;
    }

    /** Sets the execution mode (default {@link Mode#DSSMR}). */
    public Builder mode(Mode m) {
      this.mode = Objects.requireNonNull(m, "mode");
      return this;
    }

    /** Sets how many retries lead to the S-SMR fallback (default 3; 0 means always S-SMR on all partitions). */
    public Builder retryThreshold(int n) {
      if (n < 0) {
        throw new IllegalArgumentException("retryThreshold must not be negative: " + n);
      }
      this.retryThreshold = n;
      return this;
    }

    /**
     * Sets how long a whole command may take (its consults, moves, retries and S-SMR fallback
     * together) before its future fails with a {@link CallTimeoutException}: outcome unknown
     * (default 30000 ms).
     *
     * @param ms the timeout, positive
     * @return this builder
     */
    public Builder totalTimeoutMs(long ms) {
      if (ms <= 0) {
        throw new IllegalArgumentException("totalTimeoutMs must be positive: " + ms);
      }
      this.totalTimeoutMs = ms;
      return this;
    }

    /**
     * Sets how long to wait for one node's answer to one message before resending it to another
     * node (default 3000 ms, growing for further attempts; see
     * {@link MulticastClient.Builder#attemptTimeoutMs}).
     *
     * @param ms the attempt timeout, positive
     * @return this builder
     */
    public Builder attemptTimeoutMs(long ms) {
      if (ms <= 0) {
        throw new IllegalArgumentException("attemptTimeoutMs must be positive: " + ms);
      }
      this.attemptTimeoutMs = ms;
      return this;
    }

    /** Sets a listener told each time one of this proxy's multicasts is sent again (default none). */
    public Builder resendListener(io.eyrie.multicast.ResendListener l) {
      this.resendListener = l;
      return this;
    }

    /** Returns the client. */
    public Client build() {
      Objects.requireNonNull(cluster, "cluster");
      Objects.requireNonNull(registry, "service");
      return new Client(this);
    }
  }
}
