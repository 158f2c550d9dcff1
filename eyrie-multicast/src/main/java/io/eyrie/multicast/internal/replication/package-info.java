/**
 * Internal use only: a group on a node's Ratis server. Its state machine ({@code
 * GroupStateMachine}, which applies entries to the group's state and takes its snapshots, with
 * {@code StartWaits}, {@code ReplicaSnapshots} and {@code StateView}), the leader's unlogged
 * exchange of components ({@code Exchange}, one {@code MessageTrack} per undecided message), what
 * the node writes to groups' logs ({@code NodeChannels}: a {@code Submitter} of client starts per
 * group, a {@code ChannelSender} per channel its groups lead, over {@code RaftClientHolder}s),
 * queries to groups ({@code GroupQueries}) and the replies to waiting clients ({@code
 * ReplyRouter}).
 *
 * <p>May use {@code io.eyrie.multicast.internal}, {@code internal.state}, {@code
 * internal.transport} and the API package's types; none of the other internal packages uses it.
 */
package io.eyrie.multicast.internal.replication;
