package io.eyrie.chirper;

import java.security.SecureRandom;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Draws the commands of a workload over a social graph. Users are drawn uniformly; a follow
 * picks its followee the way the graph was generated (community locality, skewed popularity);
 * an unfollow picks one of the user's current followees, as this generator believes them to be,
 * so that most unfollows undo something. Thread-safe: each load thread passes its own
 * {@link Random}.
 */
public final class OpGenerator {
  private final Workload workload;
  private final SocialGraph graph;
  private final Map<Long, Set<Long>> followees = new ConcurrentHashMap<>();
  /**
   * Post ids: a random 31-bit prefix per generator and a 32-bit counter, so that several load
   * generators against one cluster do not collide (as in {@link ChirperClient}).
   */
  private final long idBase;
  private final AtomicLong nextPost = new AtomicLong();

  public OpGenerator(Workload workload, SocialGraph graph) {
    this(workload, graph, (new SecureRandom().nextLong() & 0x7fffffffL) << 32);
  }

  /**
   * A generator whose post ids are {@code idBase} plus a counter from 1 (a test that checks
   * timelines for phantom and duplicate posts fixes them itself).
   */
  OpGenerator(Workload workload, SocialGraph graph, long idBase) {
    this.workload = workload;
    this.graph = graph;
    this.idBase = idBase;
    for (long[] e : graph.follows()) {
      followees.computeIfAbsent(e[0], k -> ConcurrentHashMap.newKeySet()).add(e[1]);
    }
  }

  Workload workload() {
    return workload;
  }

  /**
   * Draws the next command.
   *
   * @param rnd the calling thread's random source
   * @return the command
   */
  Workload.Op next(Random rnd) {
    int users = graph.params().users();
    long u = rnd.nextInt(users);
    Workload.Kind kind = workload.pick(rnd.nextDouble());
    switch (kind) {
      case TIMELINE:
        return new Workload.Op(kind, u, -1, null);
      case POST:
        long id = idBase + nextPost.incrementAndGet();
        Post p = new Post(id, u, System.currentTimeMillis(), "chirp " + Long.toHexString(id) + " by " + u);
        return new Workload.Op(kind, u, -1, p);
      case FOLLOW:
        long v = -1;
        for (int tries = 0; tries < 20 && (v < 0 || v == u); tries++) {
          v = graph.pickFollowee(u, rnd);
        }
        if (v < 0 || v == u) {
          v = (u + 1 + rnd.nextInt(users - 1)) % users;
        }
        followees.computeIfAbsent(u, k -> ConcurrentHashMap.newKeySet()).add(v);
        return new Workload.Op(kind, u, v, null);
      case UNFOLLOW:
        Set<Long> mine = followees.get(u);
        Long[] current = mine == null ? new Long[0] : mine.toArray(new Long[0]);
        long w;
        if (current.length == 0) {
          // Nothing to undo: still an unfollow command, answered "was not following".
          w = (u + 1 + rnd.nextInt(users - 1)) % users;
        } else {
          w = current[rnd.nextInt(current.length)];
          mine.remove(w);
        }
        return new Workload.Op(kind, u, w, null);
      default:
        throw new IllegalStateException("unknown kind " + kind);
    }
  }
}
