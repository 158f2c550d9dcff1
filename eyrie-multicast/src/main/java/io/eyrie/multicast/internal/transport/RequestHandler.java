package io.eyrie.multicast.internal.transport;

import io.eyrie.multicast.Identity;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.internal.Wire;
import java.util.concurrent.CompletableFuture;

/**
 * What a node does with well-formed client frames; the {@link ClientEndpoint} calls it and
 * writes the answer back on the connection. Implementations never throw: failures come back
 * as replies with a non-OK status. The returned reply's requestId is ignored; the endpoint
 * sets the request's.
 */
public interface RequestHandler {

  /** Multicasts the request's message and answers with the reply group's reply. */
  CompletableFuture<Wire.ClientReply> multicast(Wire.ClientRequest request);

  /** Answers a read-only query with a linearizable read on one group. */
  CompletableFuture<Wire.ClientReply> query(Wire.QueryRequest request);

  /**
   * Multicasts a request that came from a peer whose identity is known (mutual TLS); the handler
   * refuses with {@link Status#FORBIDDEN} what the peer's role may not send. By default the
   * identity is ignored.
   *
   * @param request the request
   * @param peer the peer's identity, or null without TLS
   * @return the answer
   */
  default CompletableFuture<Wire.ClientReply> multicast(Wire.ClientRequest request, Identity peer) {
    return multicast(request);
  }

  /**
   * Answers a query from a peer whose identity is known, as {@link #multicast(Wire.ClientRequest,
   * Identity)} does.
   *
   * @param request the query
   * @param peer the peer's identity, or null without TLS
   * @return the answer
   */
  default CompletableFuture<Wire.ClientReply> query(Wire.QueryRequest request, Identity peer) {
    return query(request);
  }

  /** Answers with the cluster as the node knows it (its configuration's text form, encoded). */
  default CompletableFuture<Wire.ClientReply> view(Wire.ViewRequest request) {
    return CompletableFuture.completedFuture(new Wire.ClientReply(request.requestId(), Status.BAD_REQUEST, null,
        "this endpoint answers no view requests", 0));
  }
}
