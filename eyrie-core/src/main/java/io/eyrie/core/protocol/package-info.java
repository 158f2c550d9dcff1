/**
 * The DS-SMR protocol contract between the client proxy ({@code io.eyrie.core.Client}), the
 * partitions' server proxy and the oracle (eyrie-oracle): the multicast payloads, channel items,
 * queries and replies they exchange, the check every destination applies to a delivered message,
 * and the placement rule the proxy and the oracle share.
 *
 * <p>This package is public only so that eyrie-oracle can implement its side of the protocol; it
 * is not for applications, and it may change in any release.
 */
package io.eyrie.core.protocol;
