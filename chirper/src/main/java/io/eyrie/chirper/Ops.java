package io.eyrie.chirper;

/** Chirper's operations, as carried in commands. */
public final class Ops {
  private Ops() {}

  /** Creates a user in a community (the oracle places users by community). */
  public record NewUser(long user, int community) {}

  /**
   * Bulk loading (benchmarks): creates a user with its follow edges already in place, in the
   * partition {@code slot} modulo the number of partitions. The loader must send both ends of
   * every edge consistently (a follower lists the followee and the followee lists the follower).
   */
  public record SeedUser(long user, int community, int slot, long[] followers, long[] followees) {}

  /** Publishes a post to the author's and every follower's timeline. */
  public record PostOp(Post post) {}

  /** {@code user} starts following {@code followee}. */
  public record Follow(long user, long followee) {}

  /** {@code user} stops following {@code followee}. */
  public record Unfollow(long user, long followee) {}

  /** Reads a user's timeline; the reply is a {@code Post[]}, newest first. */
  public record GetTimeline(long user) {}
}
