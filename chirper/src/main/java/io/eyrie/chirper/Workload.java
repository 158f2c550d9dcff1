package io.eyrie.chirper;

import java.util.Locale;

/**
 * The command mixes of the paper's §6.1. Each draws the kind of the next command; a
 * {@link OpGenerator} fills in the users.
 */
public enum Workload {
  /** Only getTimeline: every command is single-partition by design. */
  TIMELINE(1.0, 0, 0),
  /** Only post: fan-out to all followers, the worst case for S-SMR. */
  POST(0, 1.0, 0),
  /** Follow and unfollow, half each: two users per command. */
  FOLLOW(0, 0, 0.5),
  /** 85% getTimeline, 7.5% post, 3.75% follow, 3.75% unfollow. */
  MIX(0.85, 0.075, 0.0375);

  /** The kind of a Chirper command. */
  enum Kind {
    TIMELINE, POST, FOLLOW, UNFOLLOW;

    String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /**
   * One command to issue.
   *
   * @param kind what it does
   * @param user the user issuing it (the author of a post)
   * @param other the followee of a follow or unfollow, else -1
   * @param post the post of a post command (id and time fixed by the generator), else null
   */
  public record Op(Kind kind, long user, long other, Post post) {}

  /** The share of each kind, in the order of {@link Kind}; unfollows have the share of follows. */
  private final double[] shares;

  Workload(double timeline, double post, double follow) {
    this.shares = new double[] {timeline, post, follow, 1.0 - timeline - post - follow};
  }

  /**
   * Maps a uniform draw in [0,1) to a command kind with this mix's shares.
   *
   * @param u a uniform draw
   * @return the kind
   */
  Kind pick(double u) {
    double below = 0;
    for (Kind k : Kind.values()) {
      below += shares[k.ordinal()];
      if (u < below) {
        return k;
      }
    }
    return Kind.UNFOLLOW;
  }

  /** Returns the share of a kind in this mix. */
  double share(Kind k) {
    return shares[k.ordinal()];
  }

  String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * Reads a workload name: timeline, post, follow (or follow-unfollow), mix.
   *
   * @param s the name
   * @return the workload
   * @throws IllegalArgumentException for an unknown name
   */
  public static Workload parse(String s) {
    return switch (s.toLowerCase(Locale.ROOT)) {
      case "timeline" -> TIMELINE;
      case "post" -> POST;
      case "follow", "follow-unfollow", "followunfollow", "follow/unfollow" -> FOLLOW;
      case "mix" -> MIX;
      default -> throw new IllegalArgumentException("unknown workload '" + s + "': expected timeline, post, follow or mix");
    };
  }
}
