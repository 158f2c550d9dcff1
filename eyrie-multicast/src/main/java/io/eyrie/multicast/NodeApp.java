package io.eyrie.multicast;

/**
 * What a node needs to host a service: the codec registrations of everything it sends and
 * stores, and the deliverer of each group replica. A DS-SMR service ({@code io.eyrie.core.Service})
 * is one; handing it to {@link Node#start(ClusterConfig, int, java.nio.file.Path, NodeApp, NodeOptions)}
 * or {@link EmbeddedCluster.Builder#app(NodeApp)} passes both at once, so that they cannot
 * disagree.
 */
public interface NodeApp {

  /** Returns the codec registrations (an immutable registry). */
  CodecRegistry registry();

  /** Returns the factory of the deliverers of the groups a node hosts. */
  Deliverer.Factory deliverers();

  /**
   * Returns a read-only query that every group of the service answers once it serves clients, or
   * null (the default) if there is none. {@link EmbeddedCluster.Builder#start()} waits until
   * each group has answered it, so that a first query after start does not wait for a new
   * leader to become able to serve reads.
   */
  default Object readinessQuery() {
    return null;
  }

  /**
   * Returns the role a peer needs to send a request, on a node whose client port runs mutual TLS
   * ({@link NodeOptions#tls()}): the decoded payload of a multicast or a query. {@link
   * Identity.Role#CLIENT} (or null, the default for everything) lets any identity send it; {@link
   * Identity.Role#ADMIN} only admins and nodes. Eyrie's own group changes ({@link
   * ClusterAdmin#addGroup}) need an admin whatever this returns. Called on the endpoint's threads
   * for every request when TLS is on, at the node that received it and before it is submitted to
   * any log, so it must be quick; not called at all without TLS.
   *
   * <p>To refuse this one request from this one peer (authorization by object), throw {@link
   * ForbiddenRequestException} with the reason: the peer gets {@link Status#FORBIDDEN} with it.
   * The peer is {@link #currentPeer()} during the call. Any other exception refuses the request
   * too (only a node may then send it), with no reason beyond the role.
   *
   * @param request the decoded payload of a multicast, or the decoded query
   * @return the role it needs; null for {@code CLIENT}
   */
  default Identity.Role requiredRole(Object request) {
    return null;
  }

  /**
   * Returns the identity of the peer whose request {@link #requiredRole} is judging, when called
   * on the thread of that call; null anywhere else, and never set without TLS (there is no
   * identity then, and requiredRole is not called).
   *
   * @return the peer's identity from its certificate, or null
   */
  static Identity currentPeer() {
    return RequestPeer.current();
  }
}
