package io.eyrie.core;

import io.eyrie.multicast.CallTimeoutException;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MulticastClient;
import io.eyrie.multicast.TlsConfig;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * Owns the public face of an application's connection to a DS-SMR cluster: the commands' send
 * methods, the partition administration calls and the builder, over the parts a
 * {@code ClientParts} wires and closes (the client proxy, its location cache and multicast client).
 * The proxy (the paper's Algorithm 2) sends commands to the partitions that hold their objects,
 * consulting the oracle where it does not know them; moves the objects of a multi-partition
 * command to one partition first; retries when told to; and after {@link Builder#retryThreshold}
 * retries executes the command with S-SMR on every partition, so every command terminates.
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

  private final ClientParts parts;

  private Client(ClientParts.Settings s) {
    this.parts = ClientParts.connect(s);
  }

  /** Returns a builder. */
  public static Builder newBuilder() {
    return new Builder();
  }

  /** Returns the execution mode. */
  public Mode mode() {
    return parts.proxy().mode();
  }

  /** Returns this proxy's counters. */
  public ClientStats stats() {
    return parts.proxy().stats();
  }

  /** Returns the cached location of an object, or null. */
  public GroupId cachedLocation(ObjId id) {
    return parts.cache().get(id);
  }

  /** Returns about how many object locations are cached (at most {@link Builder#maxCachedLocations}). */
  public long cachedLocations() {
    return parts.cache().size();
  }

  /**
   * Forgets every cached location, so that the next command on each object consults the oracle
   * (for tests that move objects behind this client's back; a stale entry only costs a retry).
   */
  public void clearLocationCache() {
    parts.cache().clear();
  }

  /**
   * Creates an object.
   *
   * @param command a {@link Command.Kind#CREATE} command
   * @return ok, or nok if the object exists already
   */
  public CompletableFuture<Reply> sendCreate(Command command) {
    return parts.proxy().send(command, Command.Kind.CREATE, null, false);
  }

  /**
   * Executes an access command.
   *
   * @param command a {@link Command.Kind#ACCESS} command
   * @return ok with the application's reply, or nok if an object does not exist
   */
  public CompletableFuture<Reply> sendAccess(Command command) {
    return parts.proxy().send(command, Command.Kind.ACCESS, null, false);
  }

  /**
   * Deletes an object.
   *
   * @param command a {@link Command.Kind#DELETE} command
   * @return ok, or nok if the object does not exist
   */
  public CompletableFuture<Reply> sendDelete(Command command) {
    return parts.proxy().send(command, Command.Kind.DELETE, null, false);
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
    return parts.proxy().send(command, Command.Kind.ACCESS, null, true);
  }

  /** As {@link #sendRead(Command)}, reporting to a callback handler. */
  public void sendRead(Command command, CallbackHandler handler) {
    parts.proxy().sendTo(handler, command, Command.Kind.ACCESS, true);
  }

  /** As {@link #sendCreate(Command)}, reporting to a callback handler. */
  public void sendCreate(Command command, CallbackHandler handler) {
    parts.proxy().sendTo(handler, command, Command.Kind.CREATE, false);
  }

  /** As {@link #sendAccess(Command)}, reporting to a callback handler. */
  public void sendAccess(Command command, CallbackHandler handler) {
    parts.proxy().sendTo(handler, command, Command.Kind.ACCESS, false);
  }

  /** As {@link #sendDelete(Command)}, reporting to a callback handler. */
  public void sendDelete(Command command, CallbackHandler handler) {
    parts.proxy().sendTo(handler, command, Command.Kind.DELETE, false);
  }

  /**
   * Returns the partitions this client knows, ascending: the cluster file's and those added to
   * the running cluster that it has learned (see {@link MulticastClient#refreshView}).
   */
  public List<GroupId> partitions() {
    return parts.net().partitions();
  }

  /**
   * Reads the oracle's partition table: which partitions are active or retired, and how many
   * objects each holds.
   *
   * @return the table
   */
  public CompletableFuture<PartitionTable> partitionTable() {
    return parts.ops().partitionTable();
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
    return parts.ops().changePartition(partition, true);
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
    return parts.ops().changePartition(partition, false);
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
  public CompletableFuture<PartitionTable> drain(GroupId partition, int batch, Duration timeout) {
    return parts.ops().drain(partition, batch, timeout);
  }

  /**
   * Reads a partition's counters.
   *
   * @param partition the partition
   * @return its counters
   */
  public CompletableFuture<PartitionStats> partitionStats(GroupId partition) {
    return parts.ops().partitionStats(partition);
  }

  /**
   * Asks the oracle where an object lives (for operators and tests: commands find their objects
   * themselves). Reads the oracle's whole map, so it is not for a hot path.
   *
   * @param id the object
   * @return the partition the oracle places it in, or null if the oracle does not know it
   */
  public CompletableFuture<GroupId> locationOf(ObjId id) {
    return parts.ops().locationOf(id);
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
    return parts.ops().rebalance(max);
  }

  /**
   * Compares the oracle's map with the partitions' contents and reports every object that is
   * missing, duplicated, misplaced or unknown to the oracle. Asks a node for the cluster's view
   * first, so partitions added to the running cluster are audited too. The map and the
   * partitions are not read at one instant, so a discrepancy is reported only if it lasts: a
   * report that is not clean is taken again (four looks, a quarter of a second apart) and keeps
   * what every look found. A command still finishing at one of its destinations, though already
   * acknowledged by another, is not reported; a move that keeps running through all the looks is.
   *
   * @return the report
   */
  public CompletableFuture<AuditReport> audit() {
    return parts.ops().audit();
  }

  @Override
  public void close() {
    parts.close();
  }

  /** Builds a {@link Client}. */
  public static final class Builder {
    private final ClientParts.Settings settings = new ClientParts.Settings();

    private Builder() {}

    /** Sets the cluster (required; it must have an oracle group). */
    public Builder cluster(ClusterConfig c) {
      settings.cluster = c;
      return this;
    }

    /**
     * Sets the service this client calls: its types are how commands and replies are encoded.
     * Without one, the client encodes Eyrie's own messages only: enough for the administration
     * calls ({@link Client#partitionTable()}, {@link Client#drain}, {@link Client#audit}, ...) of a
     * cluster hosting any service, which is how {@code eyrie status}, {@code audit} and
     * {@code partition} call it.
     */
    public Builder service(Service s) {
      settings.registry = s.registry();
      return this;
    }

    /** Sets the execution mode (default {@link Mode#DSSMR}). */
    public Builder mode(Mode m) {
      settings.mode = Objects.requireNonNull(m, "mode");
      return this;
    }

    /** Sets how many retries lead to the S-SMR fallback (default 3; 0 means always S-SMR on all partitions). */
    public Builder retryThreshold(int n) {
      settings.retryThreshold = (int) atLeast(0, "retryThreshold", n);
      return this;
    }

    /**
     * Sets the most object locations the client caches (default 1,000,000). Past it the ones
     * least likely to be used again are evicted; a command on an evicted object consults the
     * oracle, as for an object never seen.
     */
    public Builder maxCachedLocations(long n) {
      settings.maxCachedLocations = atLeast(1, "maxCachedLocations", n);
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
      settings.totalTimeoutMs = atLeast(1, "totalTimeoutMs", ms);
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
      settings.attemptTimeoutMs = atLeast(1, "attemptTimeoutMs", ms);
      return this;
    }

    /** Sets a listener told each time one of this proxy's multicasts is sent again (default none). */
    public Builder resendListener(MulticastClient.ResendListener l) {
      settings.resendListener = l;
      return this;
    }

    /**
     * Connects with mutual TLS as the identity of {@code tls}'s certificate (default null:
     * plaintext), to a cluster whose nodes run TLS on their client ports. A {@code client}
     * identity may run commands; partition changes ({@link Client#addPartition}, {@link
     * Client#retirePartition}, {@link Client#drain}), audits and {@link Client#locationOf} need
     * an {@code admin} (see {@link Service#requiredRole}), and fail otherwise with a {@link
     * io.eyrie.multicast.MulticastException} of status {@code FORBIDDEN}.
     *
     * @param tls e.g. {@code TlsConfig.fromDir(certs, "client-app")}, or null
     * @return this builder
     */
    public Builder tls(TlsConfig tls) {
      settings.tls = tls;
      return this;
    }

    /** Returns the client. */
    public Client build() {
      Objects.requireNonNull(settings.cluster, "cluster");
      if (settings.registry == null) {
        settings.registry = Eyrie.registry();
      }
      return new Client(settings);
    }

    private static long atLeast(long min, String setting, long v) {
      if (v < min) {
        throw new IllegalArgumentException(setting + " must be at least " + min + ": " + v);
      }
      return v;
    }
  }
}
