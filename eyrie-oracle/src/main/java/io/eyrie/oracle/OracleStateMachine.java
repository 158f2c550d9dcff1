package io.eyrie.oracle;

import io.eyrie.core.ClusterAware;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Deliverer;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.GroupId;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;

/**
 * The DS-SMR oracle's placement rules: where new objects go and where the objects of a
 * multi-partition command are gathered. Usable unchanged; applications override the hooks. The
 * protocol itself (the paper's Algorithm 4: the location map, consults, verdicts on creates and
 * deletes, moves, snapshots) is Eyrie's and runs around this class; its {@code Deliverer}
 * methods are final and only hand over to it.
 *
 * <p>Consults are answered by linearizable read-only queries and are only hints: the partition
 * re-checks locality when the command arrives. Everything else is applied from the log, so
 * {@link #getObjectPlacement} must be deterministic; {@link #getTargetPartition} runs only for
 * consults and may use randomness.
 */
public class OracleStateMachine implements Deliverer, ClusterAware {
  /** How the default {@link #getTargetPartition} chooses where a multi-partition command's objects go. */
  public enum Placement {
    /** The paper's rule: the partition already holding most of them (fewest moves). */
    PAPER,
    /**
     * Learned placement: the oracle's leader keeps a workload graph of the objects commands use
     * together (from the consults it answers, decayed so that it follows a changing workload),
     * computes a balanced partition of it every second in the background
     * ({@link io.eyrie.oracle.placement.PlacementPlanner}), and gathers each command's objects
     * where the plan puts most of them; when the graph shows no locality (moving would not
     * reduce the cut) it answers no target, and the client runs such commands with S-SMR
     * instead of moving objects. Needs no application hint. Not replicated: a new leader learns
     * again; every move is still an ordinary linearizable move.
     */
    GRAPH
  }

  private final Placement placement;
  private OracleServer server;

  /** Creates an oracle replica with an empty map and the paper's placement rule. */
  public OracleStateMachine() {
    this(Placement.PAPER);
  }

  /**
   * Creates an oracle replica with an empty map.
   *
   * @param placement how the default {@link #getTargetPartition} chooses
   */
  public OracleStateMachine(Placement placement) {
    this.placement = java.util.Objects.requireNonNull(placement, "placement");
  }

  /** Returns the placement rule this oracle was created with. */
  public final Placement placement() {
    return placement;
  }

  @Override
  public final void init(GroupId self, ClusterConfig cluster, Codec codec) {
    if (server != null) {
      throw new IllegalStateException("an OracleStateMachine serves one oracle replica; create a new one for each");
    }
    server = new OracleServer(this, self, cluster, codec);
  }

  @Override
  public final Execution deliver(ExecutionContext ctx) {
    return server.deliver(ctx);
  }

  @Override
  public final Execution resume(ExecutionContext ctx) {
    return server.resume(ctx);
  }

  @Override
  public final Object query(Object query) {
    return server.query(query);
  }

  @Override
  public final byte[] snapshot() {
    return server.snapshot();
  }

  @Override
  public final void restore(byte[] state) {
    server.restore(state);
  }

  /**
   * Returns the active partitions, ascending: the oracle's partition table without the retired
   * ones (see {@link io.eyrie.core.PartitionTable}). It changes, in the log's order, when a
   * partition is added or retired, so placement hooks must not cache it.
   */
  protected final List<GroupId> partitions() {
    return server.partitions();
  }

  /** Returns the number of objects the oracle places in each partition. */
  protected final SortedMap<GroupId, Long> load() {
    return Collections.unmodifiableSortedMap(server.load());
  }

  /** Returns where an object is, or null if it does not exist. */
  protected final GroupId locationOf(ObjId id) {
    return server.locationOf(id);
  }

  /**
   * Returns the objects a command touches (the paper's {@code extractObject}). The default is
   * the command's declared set.
   *
   * @param command the command
   * @return its objects
   */
  protected Set<ObjId> extractObjects(Command command) {
    return command.objects();
  }

  /**
   * Returns the partition where the objects of a multi-partition command should be gathered.
   * Called for consults only (not replicated), so it may be random. The default follows the
   * oracle's {@link Placement}: under PAPER the partition already holding most of them (fewest
   * moves), ties broken at random; under GRAPH the learned plan's choice.
   *
   * @param where the current partition of each object
   * @return the target partition, or null to move nothing: the client then executes the command
   *     with S-SMR on the partitions that hold its objects
   */
  protected GroupId getTargetPartition(Map<ObjId, GroupId> where) {
    return server.defaultTarget(where);
  }

  /**
   * Called while applying the log when a create succeeds, after the object was placed: a
   * subclass may remember attributes of the new object (for {@link #getTargetPartition}). Must
   * be deterministic, and what it keeps must be in {@link #extraState}.
   *
   * @param create the create command
   * @param at the partition the object was placed in
   */
  protected void created(Command create, GroupId at) {}

  /**
   * Called while applying the log when an object is deleted; the counterpart of
   * {@link #created}.
   *
   * @param id the deleted object
   */
  protected void deleted(ObjId id) {}

  /**
   * Returns the partition where a new object is created. Must be deterministic (it is also
   * evaluated while applying the log). The default is the partition with the fewest objects.
   * A partition that is not active (retired, or not in the table) is replaced by the active one
   * with the fewest objects.
   *
   * @param create the create command
   * @return a partition
   */
  protected GroupId getObjectPlacement(Command create) {
    SortedMap<GroupId, Long> load = load();
    GroupId best = partitions().get(0);
    for (GroupId p : partitions()) {
      if (load.getOrDefault(p, 0L) < load.getOrDefault(best, 0L)) {
        best = p;
      }
    }
    return best;
  }

  /**
   * Returns the oracle's application state beyond the location map, for snapshots: null (the
   * default) or any object of a registered type (for example a {@code TreeMap} of plain values,
   * or a record of the service's registered as a type of its {@code Service}). Eyrie encodes it.
   * Override together with {@link #restoreExtraState} if a subclass keeps replicated state of its
   * own; replicas with the same state must return equal objects (use sorted collections).
   */
  protected Object extraState() {
    return null;
  }

  /**
   * Restores what {@link #extraState} returned (a decoded copy), or starts afresh when given
   * null (an empty oracle, or a snapshot without extra state).
   *
   * @param state the state, or null
   */
  protected void restoreExtraState(Object state) {}
}
