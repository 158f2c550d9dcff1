package io.eyrie.chirper;

/**
 * One post as it appears in timelines. Ids and timestamps are fixed by the client that posts,
 * never by a replica's clock. Timelines are ordered newest first by (time, id).
 *
 * @param id the post's unique id
 * @param author the author's user id
 * @param time the client's timestamp, in milliseconds
 * @param text the text
 */
public record Post(long id, long author, long time, String text) implements Comparable<Post> {

  /** Newest first: larger time first, then larger id. */
  @Override
  public int compareTo(Post o) {
    int c = Long.compare(o.time, time);
    return c != 0 ? c : Long.compare(o.id, id);
  }
}
