package io.eyrie.core.internal;

import io.eyrie.core.CallbackHandler;
import io.eyrie.core.Client;
import io.eyrie.core.ClientStats;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Reply;
import io.eyrie.core.protocol.AccessReq;
import io.eyrie.core.protocol.ConsultReq;
import io.eyrie.core.protocol.CoreReply;
import io.eyrie.core.protocol.CreateReq;
import io.eyrie.core.protocol.DeleteReq;
import io.eyrie.core.protocol.MoveReq;
import io.eyrie.core.protocol.Prophecy;
import io.eyrie.core.protocol.ReadReq;
import io.eyrie.core.protocol.SsmrReq;
import io.eyrie.multicast.CallTimeoutException;
import io.eyrie.multicast.GroupId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Owns the DS-SMR client protocol (the paper's Algorithm 2) behind a {@link Client}: each
 * command's attempts, which locate its objects in the {@link LocationCache} or by consulting the
 * oracle, move a multi-partition command's objects to one partition first (in
 * {@link Client.Mode#DSSMR}), retry when told to, and after the retry threshold execute the
 * command with S-SMR on every partition, all within the command's total timeout; and the
 * proxy's counters. It reaches the cluster through a {@link ProxyTransport}. Thread-safe; its
 * futures never throw.
 */
public final class ClientProxy {
  private static final int MAX_FALLBACK_ROUNDS = 16;

  private final ProxyTransport net;
  private final GroupId oracle;
  private final Client.Mode mode;
  private final int retryThreshold;
  private final long totalTimeoutMs;
  private final ScheduledExecutorService timer;
  private final LocationCache cache;
  private final AtomicLong commands = new AtomicLong();
  private final AtomicLong consults = new AtomicLong();
  private final AtomicLong moves = new AtomicLong();
  private final AtomicLong movedObjects = new AtomicLong();
  private final AtomicLong retries = new AtomicLong();
  private final AtomicLong fallbacks = new AtomicLong();
  private final AtomicLong multiPartition = new AtomicLong();
  private final AtomicLong direct = new AtomicLong();
  private final AtomicLong reads = new AtomicLong();

  /**
   * Creates a proxy.
   *
   * @param net how it reaches the cluster
   * @param oracle the oracle's group
   * @param mode how it executes multi-partition commands
   * @param retryThreshold how many retries lead to the S-SMR fallback
   * @param totalTimeoutMs how long a whole command may take
   * @param timer where the commands' deadlines run (owned by the caller)
   * @param cache the location cache it reads and updates
   */
  public ClientProxy(ProxyTransport net, GroupId oracle, Client.Mode mode, int retryThreshold, long totalTimeoutMs,
      ScheduledExecutorService timer, LocationCache cache) {
    this.net = net;
    this.oracle = oracle;
    this.mode = mode;
    this.retryThreshold = retryThreshold;
    this.totalTimeoutMs = totalTimeoutMs;
    this.timer = timer;
    this.cache = cache;
  }

  /** Returns how it executes multi-partition commands. */
  public Client.Mode mode() {
    return mode;
  }

  /** Returns the proxy's counters. */
  public ClientStats stats() {
    return new ClientStats(commands.get(), cache.hits(), consults.get(), moves.get(), movedObjects.get(),
        retries.get(), fallbacks.get(), multiPartition.get(), direct.get(), reads.get());
  }

  /** Returns the cause a {@link CompletionException} wraps, or the throwable itself. */
  public static Throwable unwrap(Throwable e) {
    return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
  }

  /**
   * As {@link #send}, and reports the outcome to the handler too.
   *
   * @param handler told of each retry and of the outcome
   * @param command the command
   * @param kind the kind it must be
   * @param read whether the command only reads
   */
  public void sendTo(CallbackHandler handler, Command command, Command.Kind kind, boolean read) {
    send(command, kind, handler, read).whenComplete((r, e) -> {
      if (e != null) {
        handler.failed(unwrap(e));
      } else {
        handler.done(r);
      }
    });
  }

  /**
   * Runs a command to its outcome (see {@link Client} for what the future completes with).
   *
   * @param command the command
   * @param kind the kind it must be
   * @param handler told of each retry, or null
   * @param read whether the command only reads, so a partition may serve it off the log
   * @return the outcome
   */
  public CompletableFuture<Reply> send(Command command, Command.Kind kind, CallbackHandler handler, boolean read) {
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
        result.completeExceptionally(unwrap(e));
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
    return locate(a).thenCompose(p -> switch (p.status()) {
      case NOK -> settled(a, p);
      case RETRY -> dispatch(a, p).thenCompose(r -> outcome(a, r));
    });
  }

  /** The consult settles the command: the oracle names the object it found or missed. */
  private CompletableFuture<Reply> settled(Attempt a, Prophecy p) {
    ObjId subject = p.subject() != null ? p.subject() : a.cmd.target();
    return CompletableFuture.completedFuture(a.cmd.kind() == Command.Kind.CREATE
        ? Reply.exists(subject) : Reply.notFound(subject));
  }

  /** Sends the command where the prophecy says its objects are (or go). */
  private CompletableFuture<CoreReply> dispatch(Attempt a, Prophecy p) {
    return switch (a.cmd.kind()) {
      case CREATE -> call(Set.of(oracle, p.target()), p.target(), new CreateReq(a.cmd, p.target()));
      case DELETE -> call(Set.of(oracle, p.target()), p.target(), new DeleteReq(a.cmd, p.target()));
      case ACCESS -> access(a, p);
    };
  }

  private CompletableFuture<CoreReply> access(Attempt a, Prophecy p) {
    TreeSet<GroupId> where = new TreeSet<>(p.locations().values());
    if (where.size() == 1) {
      GroupId g = where.first();
      if (a.read) {
        return read(a, g);
      }
      return call(Set.of(g), g, new AccessReq(a.cmd));
    }
    a.moved = true;
    GroupId target = p.target();
    if (mode == Client.Mode.SSMR || target == null) {
      // S-SMR by choice, or because the oracle sees no locality worth moving objects for.
      multiPartition.incrementAndGet();
      return call(where, where.first(), new SsmrReq(a.cmd));
    }
    TreeMap<GroupId, List<ObjId>> bySource = new TreeMap<>();
    p.locations().forEach((id, g) -> {
      if (!g.equals(target)) {
        bySource.computeIfAbsent(g, k -> new ArrayList<>()).add(id);
      }
    });
    List<CompletableFuture<CoreReply>> sent = new ArrayList<>();
    for (Map.Entry<GroupId, List<ObjId>> e : bySource.entrySet()) {
      sent.add(move(e.getValue(), e.getKey(), target));
    }
    // Moves must be ordered before the command at the target, so wait for them (a command sent
    // at once would be ordered first, since a single-group message needs no timestamp exchange).
    return CompletableFuture.allOf(sent.toArray(new CompletableFuture[0])).thenCompose(v -> {
      for (CompletableFuture<CoreReply> moved : sent) {
        if (moved.join().status() == CoreReply.Status.RETRY) {
          // The target was retired after the consult chose it: ask the oracle again.
          return CompletableFuture.completedFuture(CoreReply.retry(null));
        }
      }
      cache.put(p.locations().keySet(), target);
      return call(Set.of(target), target, new AccessReq(a.cmd));
    });
  }

  /**
   * Asks the partition to serve a read off the log. OK and RETRY are answers as from the log; if
   * the partition is busy with the objects, or the query fails (no leader, a timeout), the command
   * goes through the log, in this attempt and every later one.
   */
  private CompletableFuture<CoreReply> read(Attempt a, GroupId g) {
    return net.query(g, new ReadReq(a.cmd)).handle((o, e) -> {
      if (e == null && o instanceof CoreReply r && (r.status() == CoreReply.Status.OK || r.status() == CoreReply.Status.RETRY)) {
        if (r.status() == CoreReply.Status.OK) {
          reads.incrementAndGet();
        }
        return CompletableFuture.completedFuture(r);
      }
      a.read = false;
      if (System.nanoTime() - a.deadlineNanos > 0) {
        return CompletableFuture.<CoreReply>failedFuture(unknown(a)); // the caller has its answer already
      }
      return call(Set.of(g), g, new AccessReq(a.cmd));
    }).thenCompose(f -> f);
  }

  private CompletableFuture<Prophecy> locate(Attempt a) {
    if (a.retries == 0 && a.cmd.kind() == Command.Kind.ACCESS) {
      // In DS-SMR a command whose cached objects are spread over partitions would move some of
      // them. The oracle chooses where to gather them (the application's rule) and knows where
      // they are now (the cache is often stale when objects move), so ask it first: the
      // consult costs one read-only query, a wrong move a multi-group multicast and a retry.
      Prophecy hit = cache.lookup(a.cmd.objects(), mode == Client.Mode.DSSMR);
      if (hit != null) {
        return CompletableFuture.completedFuture(hit);
      }
    }
    consults.incrementAndGet();
    return net.query(oracle, new ConsultReq(a.cmd)).thenApply(o -> {
      Prophecy p = (Prophecy) o;
      if (p.locations() != null) {
        cache.putAll(p.locations());
      }
      if (p.status() == Prophecy.Status.NOK) {
        cache.remove(a.cmd.objects());
      }
      return p;
    });
  }

  private CompletableFuture<Reply> outcome(Attempt a, CoreReply r) {
    return switch (r.status()) {
      case OK -> {
        if (a.retries == 0 && !a.moved) {
          direct.incrementAndGet();
        }
        if (a.cmd.kind() == Command.Kind.CREATE || a.cmd.kind() == Command.Kind.DELETE) {
          cache.remove(Set.of(a.cmd.target()));
        }
        yield CompletableFuture.completedFuture(Reply.ok(r.value()));
      }
      case NOT_FOUND -> CompletableFuture.completedFuture(Reply.notFound(r.extra()[0]));
      case EXISTS -> CompletableFuture.completedFuture(Reply.exists(r.extra()[0]));
      case REFUSED -> CompletableFuture.completedFuture(Reply.refused(String.valueOf(r.value())));
      case RETRY -> {
        retries.incrementAndGet();
        a.retries++;
        if (r.extra() != null && r.extra().length > 0) {
          a.cmd = a.cmd.withObjects(List.of(r.extra()));
        }
        if (a.handler != null) {
          a.handler.error(a.cmd, a.retries);
        }
        yield attempt(a);
      }
      // Only a read off the log is answered BUSY, and read() sends that command through the log.
      case BUSY -> CompletableFuture.failedFuture(new IllegalStateException("unexpected reply status " + r.status()));
    };
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
    List<GroupId> partitions = net.partitions();
    TreeSet<GroupId> dests = new TreeSet<>(partitions);
    dests.add(oracle);
    multiPartition.incrementAndGet();
    return call(dests, partitions.get(0), new SsmrReq(a.cmd)).thenCompose(r -> {
      if (r.status() == CoreReply.Status.RETRY) {
        retries.incrementAndGet();
        if (r.extra() != null) {
          a.cmd = a.cmd.withObjects(List.of(r.extra()));
        } else {
          // Refused for missing a partition added to the running cluster: learn it first.
          return net.refreshView().handle((v, e) -> v).thenCompose(v -> fallback(a));
        }
        if (a.handler != null) {
          a.handler.error(a.cmd, ++a.retries);
        }
        return fallback(a);
      }
      return outcome(a, r);
    });
  }

  /**
   * Moves the objects that one partition holds to another, counting the move.
   *
   * @param ids the objects
   * @param src the partition they are in
   * @param dst the partition they go to, which replies
   * @return the destination's reply
   */
  public CompletableFuture<CoreReply> move(List<ObjId> ids, GroupId src, GroupId dst) {
    moves.incrementAndGet();
    movedObjects.addAndGet(ids.size());
    MoveReq m = new MoveReq(ids.toArray(new ObjId[0]), src, dst);
    return call(new TreeSet<>(List.of(oracle, src, dst)), dst, m);
  }

  private CompletableFuture<CoreReply> call(Set<GroupId> dests, GroupId replyGroup, Object payload) {
    return net.multicast(dests, replyGroup, payload).thenApply(o -> (CoreReply) o);
  }
}
