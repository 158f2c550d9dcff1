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
 * Chirper's API over a DS-SMR client proxy.
 *
 * <p>A post needs its author's followers in the author's partition (the server answers
 * {@code retry(followers)} otherwise). The client remembers each author's followers as it learns
 * them (from such retries and from its own follows and unfollows) and names them in the next
 * post's command, so that a post to co-located followers goes straight to their partition,
 * without a first attempt that is refused and an oracle consult. A stale set is harmless: a
 * missing follower is still asked for by the server, and an extra one (who unfollowed through
 * another client) is dropped from the set when the reply's follower count shows it.
 *
 * <p>Post ids and timestamps are fixed here, by the
 * client: a random 31-bit prefix per client object and a 32-bit counter make ids unique in
 * practice (two of a hundred concurrent clients share a prefix with probability about 2e-6);
 * callers that need a guarantee (a test checking for duplicate posts) fix ids themselves with
 * {@link #post(Post)}.
 */
public final class ChirperClient implements AutoCloseable {
  private final Client client;
  private final AtomicLong nextPost;
  /** Authors' followers as last learned. */
  private final java.util.concurrent.ConcurrentHashMap<Long, java.util.Set<Long>> audience =
      new java.util.concurrent.ConcurrentHashMap<>();
  /** Beyond this many authors the follower cache starts over (a bound on memory). */
  private static final int AUDIENCE_MAX = 1 << 16;

  /**
   * Connects to a cluster.
   *
   * @param cluster the cluster
   * @param mode DS-SMR or the S-SMR baseline
   */
  public ChirperClient(ClusterConfig cluster, Client.Mode mode) {
    this(Client.newBuilder().cluster(cluster).service(new ChirperService().get()).mode(mode).build());
  }

  /** Wraps an existing proxy (built with {@link ChirperService}'s service). */
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
    long author = p.author();
    java.util.Set<Long> known = audience.get(author);
    java.util.List<ObjId> objects = new java.util.ArrayList<>();
    objects.add(ObjId.valueOf(author));
    if (known != null) {
      known.forEach(f -> objects.add(ObjId.valueOf(f)));
    }
    java.util.concurrent.atomic.AtomicInteger named = new java.util.concurrent.atomic.AtomicInteger(objects.size() - 1);
    CompletableFuture<Reply> result = new CompletableFuture<>();
    client.sendAccess(Command.access(new Ops.PostOp(p), objects), new io.eyrie.core.CallbackHandler() {
      @Override
      public void done(Reply r) {
        if (r.isOk() && r.value() instanceof Integer reached && reached < named.get()) {
          audience.remove(author); // some named users no longer follow: learn the set again
        }
        result.complete(r);
      }

      @Override
      public void error(Command retried, int retries) {
        java.util.Set<Long> followers = java.util.concurrent.ConcurrentHashMap.newKeySet();
        for (ObjId o : retried.objects()) {
          if (o.value() != author) {
            followers.add(o.value());
          }
        }
        named.set(followers.size());
        remember(author, followers);
      }

      @Override
      public void failed(Throwable cause) {
        result.completeExceptionally(cause);
      }
    });
    return result;
  }

  private void remember(long author, java.util.Set<Long> followers) {
    if (audience.size() >= AUDIENCE_MAX) {
      audience.clear();
    }
    audience.put(author, followers);
  }

  /** {@code user} follows {@code followee}; the reply's value is true if it was new. */
  public CompletableFuture<Reply> follow(long user, long followee) {
    return changeFollowing(new Ops.Follow(user, followee), user, followee, true);
  }

  /** {@code user} unfollows {@code followee}; the reply's value is true if it was following. */
  public CompletableFuture<Reply> unfollow(long user, long followee) {
    return changeFollowing(new Ops.Unfollow(user, followee), user, followee, false);
  }

  /**
   * Sends a follow or unfollow {@code op} on the two users; once it succeeds, adds {@code user}
   * to or removes it from {@code followee}'s remembered audience, if there is one.
   */
  private CompletableFuture<Reply> changeFollowing(Object op, long user, long followee, boolean follows) {
    return client.sendAccess(Command.access(op, ObjId.valueOf(user), ObjId.valueOf(followee))).thenApply(r -> {
      java.util.Set<Long> known = audience.get(followee);
      if (r.isOk() && known != null) {
        if (follows) {
          known.add(user);
        } else {
          known.remove(user);
        }
      }
      return r;
    });
  }

  /** Returns the followers this client believes an author has, or null if it has not learned them. */
  public java.util.Set<Long> knownFollowers(long author) {
    java.util.Set<Long> known = audience.get(author);
    return known == null ? null : java.util.Set.copyOf(known);
  }

  /** Reads a timeline, newest first. */
  public CompletableFuture<List<Post>> timeline(long user) {
    return client.sendRead(Command.access(new Ops.GetTimeline(user), ObjId.valueOf(user))).thenApply(r -> {
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
