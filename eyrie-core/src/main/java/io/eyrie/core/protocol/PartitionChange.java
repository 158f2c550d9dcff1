package io.eyrie.core.protocol;

import io.eyrie.multicast.GroupId;

/**
 * An ordered command to the oracle alone: make {@code partition} active (it takes new objects
 * and gathered ones) or retire it (nothing new goes there, and a rebalancer's plan moves its
 * objects out first: draining). The partition must be a group the oracle knows (one of the
 * cluster file's, or one added to the running cluster). Answered with the new
 * {@link io.eyrie.core.PartitionTable}.
 */
public record PartitionChange(GroupId partition, boolean active) {}
