package io.eyrie.multicast;

import io.eyrie.multicast.internal.Wire;
import io.eyrie.multicast.internal.replication.GroupQueries;
import io.eyrie.multicast.internal.replication.NodeChannels;
import io.eyrie.multicast.internal.replication.ReplyRouter;
import io.eyrie.multicast.internal.state.StoredReply;
import io.eyrie.multicast.internal.transport.RequestHandler;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers what clients ask a node through its endpoint: it validates each request (known and open
 * groups, a reply group among the destinations, a payload or query that decodes with the node's
 * codec), submits multicasts and waits for the reply group's reply, runs queries, and tells the
 * node's {@link Node.RequestListener} of each multicast answered. With mutual TLS on the client
 * port, a request whose decoded payload needs a role the peer's identity lacks is refused with
 * {@link Status#FORBIDDEN} before it is submitted: Eyrie's group changes ({@link
 * ClusterAdmin#addGroup}) need an admin, the application's requests what {@link
 * NodeApp#requiredRole} says (which may also refuse one request from one peer with a reason, {@link
 * ForbiddenRequestException}); a node may send everything. A client's or an admin's multicast must
 * also carry a client id of its own ({@link Identity#mayUseClientId}), or it is refused the same
 * way.
 */
final class NodeRequestHandler implements RequestHandler {
  private static final Logger LOG = LoggerFactory.getLogger(NodeRequestHandler.class);

  private final int nodeId;
  private final Codec codec;
  private final GroupHost host;
  private final NodeChannels channels;
  private final Supplier<Node.RequestListener> requestListener;
  private final Function<Object, Identity.Role> roles;
  private final TlsConfig tls;
  /** How long a status query waits for each Raft server. */
  private static final long STATUS_TIMEOUT_MS = 3000;

  NodeRequestHandler(int nodeId, Codec codec, GroupHost host, NodeChannels channels,
      Supplier<Node.RequestListener> requestListener, Function<Object, Identity.Role> roles, TlsConfig tls) {
    this.tls = tls;
    this.nodeId = nodeId;
    this.codec = codec;
    this.host = host;
    this.channels = channels;
    this.requestListener = requestListener;
    this.roles = roles;
  }

  @Override
  public CompletableFuture<Wire.ClientReply> multicast(Wire.ClientRequest request) {
    return multicast(request, null);
  }

  @Override
  public CompletableFuture<Wire.ClientReply> query(Wire.QueryRequest request) {
    return query(request, null);
  }

  /**
   * The role a decoded request needs: an admin for Eyrie's own group changes, else what the
   * hosted application says ({@link NodeApp#requiredRole}).
   */
  private Identity.Role required(Object decoded) {
    if (decoded instanceof Wire.GroupChange) {
      return Identity.Role.ADMIN;
    }
    if (isPeerQuestion(decoded)) {
      // A component is a group's proposal: one a client could send would order messages.
      return Identity.Role.NODE;
    }
    try {
      Identity.Role r = roles.apply(decoded);
      return r == null ? Identity.Role.CLIENT : r;
    } catch (ForbiddenRequestException e) {
      throw e; // the application refused this request from this peer: forbidden() answers it
    } catch (RuntimeException e) {
      // A hook that fails must not open the door: only nodes may send what it cannot judge.
      LOG.warn("node {}: the application's requiredRole failed for {}: {}", nodeId,
          decoded == null ? "null" : decoded.getClass().getName(), e.toString());
      return Identity.Role.NODE;
    }
  }

  /**
   * Decodes what a request carries and checks that the peer may send it.
   *
   * @param peer the connection's identity
   * @param bytes the payload or query
   * @param part what the bytes are, for the error
   * @param verb what the request does, for the error
   * @return null if the request may go on, else the reply that refuses it: BAD_REQUEST for bytes
   *     that do not decode, FORBIDDEN for what the identity may not send
   */
  private Wire.ClientReply refusal(Identity peer, byte[] bytes, String part, String verb) {
    Object decoded;
    try {
      decoded = codec.decode(bytes);
    } catch (IllegalArgumentException e) {
      return error(Status.BAD_REQUEST, "malformed " + part + ": " + e.getMessage(), 0);
    }
    return forbidden(peer, decoded, verb);
  }

  private Wire.ClientReply forbidden(Identity peer, Object decoded, String verb) {
    if (peer == null) {
      return null;
    }
    String what = decoded == null ? "null" : decoded.getClass().getSimpleName();
    Identity.Role need;
    try {
      // The application may read the peer (NodeApp.currentPeer) and refuse this one request.
      need = RequestPeer.with(peer, () -> required(decoded));
    } catch (ForbiddenRequestException e) {
      return error(Status.FORBIDDEN, "forbidden: identity " + peer + " may not " + verb + " " + what + ": "
          + e.reason(), 0);
    }
    if (peer.role().covers(need)) {
      return null;
    }
    return error(Status.FORBIDDEN, "forbidden: identity " + peer + " may not " + verb + " " + what
        + " (it needs the " + need.label() + " role)", 0);
  }

  @Override
  public CompletableFuture<Wire.ClientReply> multicast(Wire.ClientRequest request, Identity peer) {
    Wire.Start s = request.start();
    if (s == null || s.id() == null || s.dests() == null || s.replyGroup() == null || s.payload() == null) {
      return CompletableFuture.completedFuture(error(Status.BAD_REQUEST, "incomplete request", 0));
    }
    if (peer != null && !peer.mayUseClientId(s.id().client())) {
      // The id (and the watermark, which is the same client's) belongs to another identity: a
      // resend, a new attempt or a watermark under it could take over or expire its commands.
      return CompletableFuture.completedFuture(error(Status.FORBIDDEN, "forbidden: identity " + peer
          + " may not send for client id " + String.format("%016x", s.id().client()) + ": its client ids start with "
          + String.format("%08x", peer.clientIdTag()) + " (the top 32 bits, bound to its certificate)", 0));
    }
    ReplyRouter router = host.router(s.replyGroup());
    if (router == null) {
      return CompletableFuture.completedFuture(error(Status.BAD_REQUEST,
          "node " + nodeId + " does not host reply group " + s.replyGroup(), channels.leaderHint(s.replyGroup())));
    }
    for (GroupId d : s.dests()) {
      if (d == null || !host.cluster().groups().containsKey(d)) {
        return CompletableFuture.completedFuture(error(Status.BAD_REQUEST, "unknown group " + d, 0));
      }
      if (!host.isOpen(d) && !opens(s, d)) {
        // Being added: every group must know it before clients may name it. Try again.
        return CompletableFuture.completedFuture(error(Status.UNAVAILABLE,
            "group " + d + " is being added to the cluster and not open yet", 0));
      }
    }
    if (Arrays.binarySearch(s.dests(), s.replyGroup()) < 0) {
      return CompletableFuture.completedFuture(error(Status.BAD_REQUEST, "reply group is not a destination", 0));
    }
    // Every replica decodes the payload when it applies the message; bytes that cannot decode
    // (hostile declared sizes included) are refused here, before they reach any log.
    Wire.ClientReply refused = refusal(peer, s.payload(), "payload", "multicast");
    if (refused != null) {
      return CompletableFuture.completedFuture(refused);
    }
    // A request for the same message already waiting here means this node submitted it and
    // the reply group has not refused it (a failed submission fails the waiting request): a
    // prompt resend only waits for the same reply instead of adding duplicate entries to the
    // logs. A resend long after the submission submits again (see ReplyRouter.join): the
    // local replica may have skipped the entry, and the groups answer a duplicate from their
    // reply table.
    long arrived = System.nanoTime();
    ReplyRouter.Wait wait = router.join(s.id(), s.dests());
    CompletableFuture<StoredReply> reply = wait.reply();
    if (wait.submit()) {
      channels.submit(s);
    }
    return reply.handle((r, err) -> {
      int hint = channels.leaderHint(s.replyGroup());
      try {
        requestListener.get().answered(s.replyGroup(), s.dests().length, System.nanoTime() - arrived, err == null);
      } catch (RuntimeException e) {
        LOG.warn("node {}: request listener failed: {}", nodeId, e.toString());
      }
      if (err != null) {
        return error(Status.UNAVAILABLE, "not answered: " + err, hint);
      }
      return new Wire.ClientReply(request.requestId(), r.status(), r.body(), r.error(), hint);
    });
  }

  @Override
  public CompletableFuture<Wire.ClientReply> query(Wire.QueryRequest request, Identity peer) {
    if (request.group() == null || !host.cluster().groups().containsKey(request.group()) || request.query() == null) {
      return CompletableFuture.completedFuture(error(Status.BAD_REQUEST, "unknown group " + request.group(), 0));
    }
    if (request.query().length == 0) {
      if (peer != null && !peer.role().covers(Identity.Role.ADMIN)) {
        return CompletableFuture.completedFuture(error(Status.FORBIDDEN, "forbidden: identity " + peer
            + " may not query the status (it needs the admin role)", 0));
      }
      return status(request.requestId());
    }
    Object decoded;
    try {
      decoded = codec.decode(request.query());
    } catch (IllegalArgumentException e) {
      return CompletableFuture.completedFuture(error(Status.BAD_REQUEST, "malformed query: " + e.getMessage(), 0));
    }
    Wire.ClientReply refused = forbidden(peer, decoded, "query");
    if (refused != null) {
      return CompletableFuture.completedFuture(refused);
    }
    CompletableFuture<byte[]> answer = isPeerQuestion(decoded)
        ? channels.answerPeer(request.group(), request.query())
        : channels.queries().query(request.group(), request.query());
    return answer.handle((bytes, err) -> {
      int hint = channels.leaderHint(request.group());
      if (err != null) {
        Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
        return cause instanceof GroupQueries.QueryException
            ? error(Status.ERROR, "query refused: " + cause.getMessage(), hint)
            : error(Status.UNAVAILABLE, "query failed: " + cause, hint);
      }
      return new Wire.ClientReply(request.requestId(), Status.OK, bytes, null, hint);
    });
  }

  /**
   * Asks the cluster's Raft servers for the groups' status as this node (over TLS if the node has
   * it), for a query of no bytes ({@link Wire.QueryRequest}), on a thread of its own: the asks
   * block.
   */
  private CompletableFuture<Wire.ClientReply> status(long requestId) {
    long ms = STATUS_TIMEOUT_MS;
    CompletableFuture<Wire.ClientReply> f = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      try {
        String text = GroupStatus.toText(GroupStatus.query(host.cluster(), ms, tls, host.raftTransport()));
        f.complete(new Wire.ClientReply(requestId, Status.OK, codec.encode(text), null, 0));
      } catch (RuntimeException e) {
        f.complete(error(Status.ERROR, "status failed: " + e, 0));
      }
    }, "eyrie-status-query-" + nodeId);
    t.setDaemon(true);
    t.start();
    return f;
  }

  @Override
  public CompletableFuture<Wire.ClientReply> view(Wire.ViewRequest request) {
    ClusterConfig c = host.cluster();
    ClusterConfig.Builder b = ClusterConfig.newBuilder();
    c.nodes().values().forEach(n -> b.node(n.id(), n.host(), n.raftPort(), n.clientPort()));
    for (ClusterConfig.GroupInfo g : c.groups().values()) {
      if (host.isOpen(g.id())) {
        b.group(g.id(), g.kind(), g.members());
      }
    }
    return CompletableFuture.completedFuture(new Wire.ClientReply(request.requestId(), Status.OK,
        codec.encode(b.build().toText()), null, 0));
  }

  /** True for another node's unlogged question of the multicast's exchange (design 4.3.1). */
  private static boolean isPeerQuestion(Object decoded) {
    return decoded instanceof Wire.Components || decoded instanceof Wire.StartedQuery;
  }

  /** True if the message is the group change that opens {@code g} (it names g before g is open). */
  private boolean opens(Wire.Start s, GroupId g) {
    try {
      return s.payload().length > 0 && codec.decode(s.payload()) instanceof Wire.GroupChange c && c.open()
          && g.equals(c.group());
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  private static Wire.ClientReply error(Status status, String message, int hint) {
    return new Wire.ClientReply(0, status, null, message, hint);
  }
}
