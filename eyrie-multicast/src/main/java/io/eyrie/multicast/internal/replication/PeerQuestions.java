package io.eyrie.multicast.internal.replication;

import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MulticastClient;
import io.eyrie.multicast.NodeOptions;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Owns the unlogged questions this node puts to other groups' leaders (design 4.3.1: components
 * and {@code StartedQuery}s) and the connection they travel on: Eyrie's own node-to-node link, a
 * {@link MulticastClient} that speaks as this node (its TLS identity, whose {@code node} role is
 * the only one the other nodes answer these questions for), with one connection per other node and
 * the leader of each group learned from the answers. A question the link cannot answer (the other
 * node is down, busy or does not host the group) goes once more as a Ratis read to the group's
 * leader ({@link GroupQueries#queryUnordered}), the path it always took before the link.
 *
 * <p>Every question is idempotent and answered from applied state (rule 4), so sending it twice,
 * or to a follower, costs time and never correctness: the exchange pulls again (rule B1) and the
 * reply gate asks again.
 */
final class PeerQuestions implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PeerQuestions.class);
  /** An attempt on the link; a question is one of many the exchange repeats, so it gives up soon. */
  static final long ATTEMPT_MS = 500;
  /** All attempts on the link, after which the question goes through Ratis once. */
  static final long TOTAL_MS = 1500;

  private final Supplier<ClusterConfig> cluster;
  private final NodeOptions options;
  private final Codec codec;
  private final GroupQueries fallback;
  private final AtomicLong asked = new AtomicLong();
  private final AtomicLong fellBack = new AtomicLong();
  /** Created on first use (a node that never leads a multi-group message needs no link). Guarded by this. */
  private MulticastClient link;
  private volatile boolean closed;

  PeerQuestions(Supplier<ClusterConfig> cluster, NodeOptions options, Codec codec, GroupQueries fallback) {
    this.cluster = cluster;
    this.options = options;
    this.codec = codec;
    this.fallback = fallback;
  }

  /**
   * Asks group {@code g}'s leader the question and returns its decoded answer.
   *
   * @param g the group
   * @param question a {@code Wire.Components} or {@code Wire.StartedQuery}
   * @return the decoded answer; fails if neither the link nor Ratis answered
   */
  CompletableFuture<Object> ask(GroupId g, Object question) {
    asked.incrementAndGet();
    MulticastClient c = link();
    if (c == null) {
      return viaRatis(g, question);
    }
    return c.query(g, question).handle((answer, err) -> {
      if (err == null) {
        return CompletableFuture.completedFuture(answer);
      }
      LOG.debug("question to {} over the node link failed ({}); asking through Ratis", g, err.toString());
      return viaRatis(g, question);
    }).thenCompose(f -> f);
  }

  private CompletableFuture<Object> viaRatis(GroupId g, Object question) {
    fellBack.incrementAndGet();
    byte[] q;
    try {
      q = codec.encode(question);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return fallback.queryUnordered(g, q).thenApply(codec::decode);
  }

  private synchronized MulticastClient link() {
    if (link == null && !closed) {
      try {
        link = MulticastClient.newBuilder().cluster(cluster.get()).registry(options.registry()).tls(options.tls())
            .attemptTimeoutMs(ATTEMPT_MS).totalTimeoutMs(TOTAL_MS).build();
      } catch (RuntimeException e) {
        LOG.warn("cannot open the node-to-node link: {}; asking through Ratis", e.toString());
        return null;
      }
    }
    return link;
  }

  /** Questions asked since the node started. */
  long asked() {
    return asked.get();
  }

  /** Of the questions asked, those that went through Ratis because the link did not answer. */
  long fellBack() {
    return fellBack.get();
  }

  @Override
  public synchronized void close() {
    closed = true;
    if (link != null) {
      link.close();
    }
  }
}
