package io.eyrie.chirper;

/** Chirper's operations, as carried in commands. */
public final class Ops {
  private Ops() {}

  /** Creates a user in a community (the oracle places users by community). */
  public record NewUser(long user, int community) {}

  /** Publishes a post to the author's and every follower's timeline. */
  public record PostOp(Post post) {}

  /** {@code user} starts following {@code followee}. */
  public record Follow(long user, long followee) {}

  /** {@code user} stops following {@code followee}. */
  public record Unfollow(long user, long followee) {}

  /** Reads a user's timeline; the reply is a {@code Post[]}, newest first. */
  public record GetTimeline(long user) {}
}
