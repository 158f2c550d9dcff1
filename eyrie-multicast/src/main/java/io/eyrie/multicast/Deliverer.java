package io.eyrie.multicast;

/**
 * The application side of one group's replica: executes atomically delivered messages.
 *
 * <p>Every replica of a group calls {@link #deliver} for the same messages in the same order
 * (the global order of atomic multicast, restricted to this group), on the thread that applies
 * the group's log. Implementations must therefore be deterministic: no wall clock, no
 * randomness, no iteration over collections whose order may differ between replicas, and no
 * blocking. They must not throw: an exception (an {@link Error} too, such as an
 * {@link AssertionError}) becomes an error reply, which is deterministic only if the exception
 * is. A {@link VirtualMachineError} (out of memory, stack overflow) is not answered but stops
 * the replica, since it depends on the replica rather than on the log: do not recurse without a
 * bound. Decoding refuses values nested deeper than {@link Codec#MAX_DEPTH}, and sizes declared
 * larger than the bytes that follow them (see {@link Codec}).
 *
 * <p>A message whose execution needs data from other groups (object values, verdicts, signals)
 * returns {@link Execution#awaitFrom}; the group then keeps applying its log, buffers the
 * items sent for the message, and calls {@link #resume} once an item from each awaited group
 * has arrived. Later messages wait until the parked one completes.
 *
 * <pre>{@code
 * class Counter implements Deliverer {
 *   long value;
 *   public Execution deliver(ExecutionContext ctx) {
 *     value += (Long) ctx.payload();
 *     return Execution.reply(value);
 *   }
 *   public byte[] snapshot() { return ByteBuffer.allocate(8).putLong(value).array(); }
 *   public void restore(byte[] s) { value = s.length == 0 ? 0 : ByteBuffer.wrap(s).getLong(); }
 * }
 * }</pre>
 */
public interface Deliverer {

  /**
   * Executes a delivered message that has reached the head of this group's execution queue.
   *
   * @param ctx the message and the means to send items to other groups
   * @return a reply, an error, {@link Execution#done()}, or a wait for items
   */
  Execution deliver(ExecutionContext ctx);

  /**
   * Continues a message parked by {@link Execution#awaitFrom}, once an item from each awaited
   * group has arrived ({@link ExecutionContext#received(GroupId)}).
   *
   * @param ctx the message, with every item received for it so far
   * @return as for {@link #deliver}
   */
  default Execution resume(ExecutionContext ctx) {
    return Execution.error("this deliverer does not park messages");
  }

  /**
   * Answers a read-only query (served by Ratis as a linearizable read, not through the log).
   * Called concurrently with nothing else of this deliverer; must not change state.
   *
   * @param query the decoded query
   * @return the answer, a registered object
   */
  default Object query(Object query) {
    throw new UnsupportedOperationException("this group answers no queries");
  }

  /**
   * Returns the whole application state of this replica, including anything a parked message
   * needs to resume. Called between two deliveries.
   *
   * @return the state's bytes
   */
  byte[] snapshot();

  /**
   * Replaces this replica's state with one returned by {@link #snapshot()} (possibly on another
   * replica). An empty array means the initial state.
   *
   * @param state the bytes
   */
  void restore(byte[] state);

  /** Creates the deliverer of each group replica that a node hosts. */
  @FunctionalInterface
  interface Factory {

    /**
     * Creates the deliverer of one group replica, in its initial state.
     *
     * @param group the group
     * @param cluster the cluster the replica starts from, the same at every replica of the group:
     *     the cluster file's groups (and, for a group added to the running cluster, the groups its
     *     replicas were created knowing). Groups added later are not in it even on a node that
     *     knows them: they reach the replica through its log, so its initial state must depend on
     *     this configuration only
     * @param codec the cluster's codec
     * @return a new deliverer
     */
    Deliverer create(GroupId group, ClusterConfig cluster, Codec codec);
  }
}
