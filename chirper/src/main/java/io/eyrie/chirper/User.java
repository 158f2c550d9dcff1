package io.eyrie.chirper;

import io.eyrie.core.ObjId;
import io.eyrie.core.PRObject;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * A Chirper user: followers, followees, the user's own recent posts, and a bounded
 * materialized timeline (newest first) that fan-out on write keeps up to date.
 */
public final class User extends PRObject {
  /** Most posts a timeline keeps. */
  public static final int TIMELINE_MAX = 50;
  /** Most own posts a user keeps (copied into a new follower's timeline). */
  public static final int OWN_POSTS_MAX = 20;

  int community;
  TreeSet<Long> followers = new TreeSet<>();
  TreeSet<Long> followees = new TreeSet<>();
  ArrayList<Post> own = new ArrayList<>();
  ArrayList<Post> timeline = new ArrayList<>();

  private User() {}

  User(long id, int community) {
    super(ObjId.valueOf(id));
    this.community = community;
  }

  /** Returns the user's community. */
  public int community() {
    return community;
  }

  /** Returns the followers' ids. */
  public TreeSet<Long> followers() {
    return followers;
  }

  /** Returns the followees' ids. */
  public TreeSet<Long> followees() {
    return followees;
  }

  /** Returns the timeline, newest first. */
  public List<Post> timeline() {
    return timeline;
  }

  /**
   * This user without the timeline (and without the own posts unless {@code withOwn}), for other
   * partitions executing a post or an (un)follow: those never read another partition's user's
   * timeline (they write it only where the user lives), and only a follow reads the followee's
   * own posts. The posts are most of a user's bytes.
   */
  User lightCopy(boolean withOwn) {
    User u = new User(getId().value(), community);
    u.followers = followers;
    u.followees = followees;
    if (withOwn) {
      u.own = own;
    }
    return u;
  }

  /**
   * A copy whose collections later writes to this user cannot change (the posts are immutable
   * and shared): what a command's failure puts back. A few microseconds, where encoding a user
   * with a full timeline takes tens.
   */
  User copyForRollback() {
    User u = new User(getId().value(), community);
    u.followers = new TreeSet<>(followers);
    u.followees = new TreeSet<>(followees);
    u.own = new ArrayList<>(own);
    u.timeline = new ArrayList<>(timeline);
    return u;
  }

  void addToTimeline(Post p) {
    insert(timeline, p, TIMELINE_MAX);
  }

  void addOwn(Post p) {
    insert(own, p, OWN_POSTS_MAX);
  }

  void removeAuthorFromTimeline(long author) {
    timeline.removeIf(p -> p.author() == author);
  }

  private static void insert(ArrayList<Post> list, Post p, int max) {
    int i = 0;
    while (i < list.size() && list.get(i).compareTo(p) < 0) {
      i++;
    }
    if (i < list.size() && list.get(i).id() == p.id()) {
      return;
    }
    list.add(i, p);
    while (list.size() > max) {
      list.remove(list.size() - 1);
    }
  }
}
