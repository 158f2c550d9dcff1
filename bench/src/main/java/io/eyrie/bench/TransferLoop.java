package io.eyrie.bench;

import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Reply;
import io.eyrie.examples.bank.BankOps;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;

/**
 * A closed loop of bank transfers within communities, for the placement benchmarks: each
 * completed transfer starts the next, from a random account a to a random other account of a's
 * community ({@code community.apply(a)}, the members of a's community, read per transfer so a
 * benchmark can change the communities while it runs), round robin over the clients.
 */
final class TransferLoop {
  private final List<Client> clients;
  private final int accounts;
  private final IntFunction<int[]> community;
  private final AtomicBoolean stop = new AtomicBoolean();
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicInteger next = new AtomicInteger();
  final AtomicLong done = new AtomicLong();
  final AtomicLong errors = new AtomicLong();
  final AtomicReference<Throwable> firstError = new AtomicReference<>();

  TransferLoop(List<Client> clients, int accounts, IntFunction<int[]> community) {
    this.clients = clients;
    this.accounts = accounts;
    this.community = community;
  }

  /** Starts {@code outstanding} transfers, each followed by another when it completes. */
  void start(int outstanding) {
    for (int i = 0; i < outstanding; i++) {
      launch();
    }
  }

  private void launch() {
    if (stop.get()) {
      return;
    }
    Client c = clients.get(Math.floorMod(next.getAndIncrement(), clients.size()));
    ThreadLocalRandom r = ThreadLocalRandom.current();
    int a = r.nextInt(accounts);
    int[] group = community.apply(a);
    int b = group[r.nextInt(group.length - 1)];
    if (b == a) {
      b = group[group.length - 1];
    }
    inFlight.incrementAndGet();
    CompletableFuture<Reply> f;
    try {
      f = c.sendAccess(Command.access(new BankOps.Transfer(a, b, 1), ObjId.valueOf(a), ObjId.valueOf(b)));
    } catch (RuntimeException e) {
      f = CompletableFuture.failedFuture(e);
    }
    f.whenComplete((reply, e) -> {
      inFlight.decrementAndGet();
      if (e == null && reply.isOk()) {
        done.incrementAndGet();
      } else {
        errors.incrementAndGet();
        firstError.compareAndSet(null, e != null ? e : new IllegalStateException(String.valueOf(reply)));
      }
      launch();
    });
  }

  /** Starts no more transfers and waits (at most {@code timeoutNanos}) for those in flight. */
  void stop(long timeoutNanos) {
    stop.set(true);
    long deadline = System.nanoTime() + timeoutNanos;
    while (inFlight.get() > 0 && System.nanoTime() < deadline) {
      LockSupport.parkNanos(10_000_000L);
    }
  }
}
