package io.eyrie.core.protocol;

import io.eyrie.multicast.GroupId;

/**
 * Channel item from a partition to the oracle: the partition has reached a create, delete or
 * move at the head of its execution queue (everything ordered before it there is done,
 * everything arriving later is ordered after it). The oracle changes its map (and, for a create
 * or delete, sends its verdict) only once every partition destination has sent this (execution
 * atomicity); for a move, only the source sends it, once its values have left.
 *
 * <p>{@code refusal} is null, or why the partition cannot carry the command out, decided when it
 * started: the application's {@code createObject} failed or returned an object that cannot be
 * stored, or a move's values could not be shipped. The oracle then refuses the create (its map
 * never names the object) or leaves the map as it was for the move.
 */
public record Begun(GroupId partition, String refusal) {
  /** The longest refusal carried. */
  public static final int REFUSAL_MAX = 300;

  /** A partition that can carry the command out. */
  public Begun(GroupId partition) {
    this(partition, null);
  }

  /** A partition that cannot, and why (cut to {@link #REFUSAL_MAX} characters). */
  public static Begun refused(GroupId partition, String why) {
    String w = why == null ? "refused" : why;
    return new Begun(partition, w.length() <= REFUSAL_MAX ? w : w.substring(0, REFUSAL_MAX));
  }
}
