package io.eyrie.multicast;

import io.eyrie.multicast.internal.Wire;
import io.netty.channel.Channel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;

/**
 * One multicast or query of a {@link MulticastClient}, from the call until its future completes,
 * across all of its attempts. Every attempt sends the same content under a fresh request id.
 */
final class ClientCall {

  /** One request id under which the call was sent, on one node's connection. */
  record Sent(ClientConnection conn, long rid) {}

  /** The multicast's sequence number, or -1 for a query. */
  final long seq;
  /** The group that answers: the reply group, or the queried group; null for a view request (any node answers). */
  final GroupId group;
  private final Wire.Start start;
  private final byte[] query;
  final CompletableFuture<Object> result = new CompletableFuture<>();

  // Guarded by this.
  /** The request id of the attempt that is waited for, 0 between attempts. */
  long current;
  int currentNode;
  /** The channel the current attempt was written on, null until known. */
  Channel currentChannel;
  int attempts;
  ScheduledFuture<?> attemptTimer;
  ScheduledFuture<?> totalTimer;
  ScheduledFuture<?> backoffTimer;
  final List<Sent> sent = new ArrayList<>();

  ClientCall(long seq, GroupId group, Wire.Start start, byte[] query) {
    this.seq = seq;
    this.group = group;
    this.start = start;
    this.query = query;
  }

  /** Returns the frame for one attempt. */
  Object frame(long requestId) {
    if (start != null) {
      return new Wire.ClientRequest(requestId, start);
    }
    return group == null ? new Wire.ViewRequest(requestId) : new Wire.QueryRequest(requestId, group, query);
  }

  /** Returns the multicast's id, or null for a query. */
  MsgId msgId() {
    return start != null ? start.id() : null;
  }

  @Override
  public String toString() {
    return start != null ? "multicast " + start.id() : group == null ? "view request" : "query to " + group;
  }
}
