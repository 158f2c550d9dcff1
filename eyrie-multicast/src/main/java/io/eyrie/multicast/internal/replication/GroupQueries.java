package io.eyrie.multicast.internal.replication;

import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.multicast.internal.transport.RatisSupport;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

/**
 * A node's linearizable read-only queries to groups (the oracle's consult, counters, audits,
 * readiness), one Ratis client per group, replaced after a failure.
 */
public final class GroupQueries implements AutoCloseable {
  private final Supplier<ClusterConfig> cluster;
  private final NodeOptions options;
  private final Function<GroupId, RaftServer.Division> local;
  private final Map<GroupId, RaftClientHolder> clients = new ConcurrentHashMap<>();

  /**
   * @param local this node's replica of a group, or null: a query to a group it leads is handed
   *     to it in process ({@link NodeOptions#localSubmit()}), as writes are
   */
  GroupQueries(Supplier<ClusterConfig> cluster, NodeOptions options, Function<GroupId, RaftServer.Division> local) {
    this.cluster = cluster;
    this.options = options;
    this.local = local;
  }

  /** Runs a query on a group; fails with {@link QueryException} if the group refused it. */
  public CompletableFuture<byte[]> query(GroupId g, byte[] query) {
    return ask(g, query, RaftClientHolder::sendReadOnly);
  }

  /** Sends a query through the group's client and unwraps its answer, or the application's refusal. */
  private CompletableFuture<byte[]> ask(GroupId g, byte[] query,
      java.util.function.BiFunction<RaftClientHolder, Message, CompletableFuture<RaftClientReply>> send) {
    RaftClientHolder holder = clients.computeIfAbsent(g,
        k -> new RaftClientHolder(() -> RatisSupport.newClient(cluster.get(), k, options), () -> local.apply(k), options));
    try {
      return send.apply(holder, Message.valueOf(UnsafeByteOperations.unsafeWrap(query))).thenApply(r -> {
        if (r.isSuccess()) {
          return r.getMessage().getContent().toByteArray();
        }
        if (r.getException() instanceof StateMachineException sme) {
          throw new QueryException(String.valueOf(sme.getCause() == null ? sme.getMessage() : sme.getCause().getMessage()));
        }
        throw new IllegalStateException(String.valueOf(r.getException()));
      });
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }


  /**
   * Asks a group's leader without a ReadIndex round (a Ratis non-linearizable read): for the
   * exchange's questions, whose answers are facts of committed state (design 4.3.1).
   */
  public CompletableFuture<byte[]> queryUnordered(GroupId g, byte[] query) {
    return ask(g, query, RaftClientHolder::sendNonLinearizable);
  }


  /** A query the group's application refused (not a transient failure). */
  public static final class QueryException extends RuntimeException {
    QueryException(String message) {
      super(message);
    }
  }

  @Override
  public void close() {
    clients.values().forEach(RaftClientHolder::close);
  }
}
