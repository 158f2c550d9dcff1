package io.eyrie.chirper;

import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Reply;
import io.eyrie.multicast.ClusterConfig;
import java.security.SecureRandom;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Chirper's API over a DS-SMR client proxy. Post ids and timestamps are fixed here, by the
 * client: a random 31-bit prefix per client object and a 32-bit counter make ids unique in
 * practice (two of a hundred concurrent clients share a prefix with probability about 2e-6);
 * callers that need a guarantee (a test checking for duplicate posts) fix ids themselves with
 * {@link #post(Post)}.
 */
public final class ChirperClient implements AutoCloseable {
  private final Client client;
  private final AtomicLong nextPost;

  /**
   * Connects to a cluster.
   *
   * @param cluster the cluster
   * @param mode DS-SMR or the S-SMR baseline
   */
  public ChirperClient(ClusterConfig cluster, Client.Mode mode) {
    this(Client.newBuilder().cluster(cluster).registry(ChirperServer.registry()).mode(mode).build());
  }

  /** Wraps an existing proxy (built with {@link ChirperServer#registry()}). */
  public ChirperClient(Client client) {
    this.client = client;
    this.nextPost = new AtomicLong((new SecureRandom().nextLong() & 0x7fffffffL) << 32);
  }

  /** Returns the underlying proxy (for its counters). */
  public Client proxy() {
    return client;
  }

  /** Creates a user in a community; ok, or nok if the user exists. */
  public CompletableFuture<Reply> createUser(long user, int community) {
    return client.sendCreate(Command.create(ObjId.valueOf(user), new Ops.NewUser(user, community)));
  }

  /** Posts; the reply's value is the number of followers reached. */
  public CompletableFuture<Reply> post(long user, String text) {
    return post(newPost(user, text));
  }

  /** Returns a post with a fresh id and this client's current time, without sending it. */
  public Post newPost(long user, String text) {
    return new Post(nextPost.incrementAndGet(), user, System.currentTimeMillis(), text);
  }

  /** Posts a post whose id and time the caller fixed. */
  public CompletableFuture<Reply> post(Post p) {
    return client.sendAccess(Command.access(new Ops.PostOp(p), ObjId.valueOf(p.author())));
  }

  /** {@code user} follows {@code followee}; the reply's value is true if it was new. */
  public CompletableFuture<Reply> follow(long user, long followee) {
    return client.sendAccess(Command.access(new Ops.Follow(user, followee), ObjId.valueOf(user),
        ObjId.valueOf(followee)));
  }

  /** {@code user} unfollows {@code followee}; the reply's value is true if it was following. */
  public CompletableFuture<Reply> unfollow(long user, long followee) {
    return client.sendAccess(Command.access(new Ops.Unfollow(user, followee), ObjId.valueOf(user),
        ObjId.valueOf(followee)));
  }

  /** Reads a timeline, newest first. */
  public CompletableFuture<List<Post>> timeline(long user) {
    return client.sendAccess(Command.access(new Ops.GetTimeline(user), ObjId.valueOf(user))).thenApply(r -> {
      if (!r.isOk()) {
        throw new IllegalStateException("no timeline for user " + user + ": " + r.reason());
      }
      return List.of((Post[]) r.value());
    });
  }

  @Override
  public void close() {
    client.close();
  }
}
