/**
 * Internal use only: eyrie-multicast's implementation, in packages by concern, and here what
 * they share: the log entries and channel items ({@code Wire}, {@code WireTypes}) and the Kryo
 * serializers and input that refuse hostile sizes ({@code DeclaredSizes}, {@code BoundedInput}).
 *
 * <ul>
 *   <li>{@code internal.state}: a group's replicated, deterministic state and its snapshot;
 *   <li>{@code internal.transport}: the Netty client endpoint, its frames, and Ratis over Netty;
 *   <li>{@code internal.replication}: a group's Ratis state machine, what a node writes to groups'
 *       logs (client starts, channel batches) and the replies to waiting clients.
 * </ul>
 *
 * <p>This package may use only the API package's types ({@code io.eyrie.multicast}); the
 * packages below it may use this one, and {@code ArchitectureTest} checks which of them may use
 * which. The classes are public only so that the API package can wire them; nothing outside the
 * eyrie-multicast module may use them, and they may change in any release without notice.
 */
package io.eyrie.multicast.internal;
