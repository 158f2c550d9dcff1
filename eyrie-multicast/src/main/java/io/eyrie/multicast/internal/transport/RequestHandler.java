package io.eyrie.multicast.internal.transport;

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

  /** Answers with the cluster as the node knows it (its configuration's text form, encoded). */
  default CompletableFuture<Wire.ClientReply> view(Wire.ViewRequest request) {
    return CompletableFuture.completedFuture(new Wire.ClientReply(request.requestId(), Status.BAD_REQUEST, null,
        "this endpoint answers no view requests", 0));
  }
}
