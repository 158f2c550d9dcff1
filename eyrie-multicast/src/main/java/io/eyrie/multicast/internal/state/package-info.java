/**
 * Internal use only: the replicated, deterministic state of one group ({@link
 * io.eyrie.multicast.internal.state.GroupState}) and its snapshot. Owns Skeen ordering ({@code
 * Ordering}, {@code Msg}), the execution queue ({@code ExecutionQueue} with its inboxes, the
 * messages off the queue and the replies awaiting started-signals), the exactly-once client
 * records ({@code ClientTable}), the channels' outboxes and positions ({@code Outboxes}, {@code
 * SeqQueue}), the groups known and open ({@code Membership}), and the rules that join them
 * ({@code Admission}, {@code ChannelItems}, {@code GroupChanges}). What the parts share is not
 * nested in {@code GroupState} but stands beside it ({@code StoredReply}, {@code StateCounters},
 * {@code StateListener}; the reply {@code Status} is the API package's), so that only the rules
 * that join the parts, the snapshot and the describer use {@code GroupState}.
 *
 * <p>May use {@code io.eyrie.multicast.internal} (the wire types) and the API package's types;
 * not {@code internal.transport} nor {@code internal.replication}: the state knows nothing of
 * Ratis or Netty, so every replica computes it from the log alone. Its parts share package-private
 * fields, which is why they are one package.
 */
package io.eyrie.multicast.internal.state;
