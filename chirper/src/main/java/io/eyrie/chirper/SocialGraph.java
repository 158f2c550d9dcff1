package io.eyrie.chirper;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * A seeded social graph with communities, a skewed (Zipf) follower distribution, and most follows
 * inside the follower's community. The same seed and parameters give the same graph.
 */
public final class SocialGraph {

  /**
   * Graph parameters.
   *
   * @param users number of users (ids 0..users-1)
   * @param communities number of communities (user u is in community u mod communities)
   * @param followsPerUser average number of users each user follows
   * @param skew Zipf exponent of popularity (0 = uniform; 1 = strongly skewed)
   * @param inCommunity share of follows inside the follower's community
   */
  public record Params(int users, int communities, int followsPerUser, double skew, double inCommunity) {
    public Params {
      if (users < 2 || communities < 1 || communities > users || followsPerUser < 0 || skew < 0
          || inCommunity < 0 || inCommunity > 1) {
        throw new IllegalArgumentException("bad social graph parameters: " + this);
      }
    }

    /** Defaults for a demo: 1000 users in 8 communities, 10 follows each, skew 1.0, 90% inside. */
    public static Params defaults() {
      return new Params(1000, 8, 10, 1.0, 0.9);
    }
  }

  private final Params params;
  private final double[] cumulative;
  private final List<long[]> follows = new ArrayList<>();

  private SocialGraph(Params params) {
    this.params = params;
    int perCommunity = (params.users() + params.communities() - 1) / params.communities();
    this.cumulative = new double[perCommunity];
    double sum = 0;
    for (int r = 0; r < perCommunity; r++) {
      sum += 1.0 / Math.pow(r + 1, params.skew());
      cumulative[r] = sum;
    }
  }

  /** Generates a graph. */
  public static SocialGraph generate(long seed, Params p) {
    Random rnd = new Random(seed);
    SocialGraph g = new SocialGraph(p);
    Set<Long> seen = new HashSet<>();
    for (long u = 0; u < p.users(); u++) {
      int target = p.followsPerUser();
      for (int k = 0, tries = 0; k < target && tries < target * 20; tries++) {
        long v = g.pickFollowee(u, rnd);
        if (v < 0 || v == u || !seen.add(u * p.users() + v)) {
          continue;
        }
        g.follows.add(new long[] {u, v});
        k++;
      }
    }
    return g;
  }

  /**
   * Draws a user that {@code user} might follow, with the graph's community locality and
   * popularity skew (the load generator's follows look like the generated ones).
   *
   * @param user the follower
   * @param rnd the random source
   * @return a user id, or -1 if the draw fell outside the id range (draw again)
   */
  public long pickFollowee(long user, Random rnd) {
    int community = rnd.nextDouble() < params.inCommunity() ? community(user, params)
        : rnd.nextInt(params.communities());
    int rank = Arrays.binarySearch(cumulative, rnd.nextDouble() * cumulative[cumulative.length - 1]);
    rank = rank < 0 ? -rank - 1 : rank;
    long v = (long) rank * params.communities() + community;
    return v < params.users() ? v : -1;
  }

  static int community(long user, Params p) {
    return (int) (user % p.communities());
  }

  /** Returns the community of a user. */
  public int community(long user) {
    return community(user, params);
  }

  /** Returns the parameters. */
  public Params params() {
    return params;
  }

  /** Returns the follow edges {follower, followee}. */
  public List<long[]> follows() {
    return follows;
  }
}
