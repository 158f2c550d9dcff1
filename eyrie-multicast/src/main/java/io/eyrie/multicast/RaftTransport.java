package io.eyrie.multicast;

import java.util.Locale;

/**
 * The transport of a node's Raft port: what its Ratis servers and the Ratis clients it opens
 * speak to each other ({@link NodeOptions#raftTransport()}). Every node of a cluster must use the
 * same one: a gRPC Raft port does not speak Netty RPC, nor the other way round.
 */
public enum RaftTransport {
  /**
   * Ratis's Netty RPC, through Eyrie's wrapper (the default): mutual TLS with a role check, the
   * Raft port's frame limit, and one call-id-0 request per peer at a time so that many groups per
   * server do not break each other's votes and snapshot installations.
   */
  NETTY,
  /**
   * Ratis's gRPC transport ({@code ratis-grpc}), for comparison with {@link #NETTY}: mutual TLS
   * with the same role check, and gRPC's own message size limit in place of the frame limit.
   */
  GRPC;

  /** The name as configuration files and flags spell it: {@code netty} or {@code grpc}. */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * The transport of a label.
   *
   * @param label {@code netty} or {@code grpc}, in any case
   * @return the transport
   * @throws IllegalArgumentException saying which values are taken
   */
  public static RaftTransport of(String label) {
    for (RaftTransport t : values()) {
      if (t.label().equalsIgnoreCase(label == null ? "" : label.trim())) {
        return t;
      }
    }
    throw new IllegalArgumentException("expects netty or grpc, not '" + label + "'");
  }
}
