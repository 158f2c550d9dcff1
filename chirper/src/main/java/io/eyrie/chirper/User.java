package io.eyrie.chirper;

import io.eyrie.core.ObjId;
import io.eyrie.core.PRObject;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SortedSet;
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

  /** The bits of {@link #shared}, one per collection. */
  private static final int FOLLOWERS = 1, FOLLOWEES = 2, OWN = 4, TIMELINE = 8;

  int community;
  TreeSet<Long> followers = new TreeSet<>();
  TreeSet<Long> followees = new TreeSet<>();
  ArrayList<Post> own = new ArrayList<>();
  ArrayList<Post> timeline = new ArrayList<>();
  /**
   * The collections (bits above) this user shares with a copy for rollback: each is copied before
   * its first write, so that a command pays only for what it writes. Not encoded.
   */
  private transient int shared;

  private User() {}

  User(long id, int community) {
    super(ObjId.valueOf(id));
    this.community = community;
  }

  /** Returns the user's community. */
  public int community() {
    return community;
  }

  /** Returns the followers' ids (read-only). */
  public SortedSet<Long> followers() {
    return Collections.unmodifiableSortedSet(followers);
  }

  /** Returns the followees' ids (read-only). */
  public SortedSet<Long> followees() {
    return Collections.unmodifiableSortedSet(followees);
  }

  /** Returns the timeline, newest first (read-only). */
  public List<Post> timeline() {
    return Collections.unmodifiableList(timeline);
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
   * A copy that later writes to this user cannot change: what a command's failure puts back. It
   * shares the collections (the posts are immutable too), and both users copy a shared
   * collection before they first write it, so a post copies the timelines it writes and never
   * a follower set. Encoding a user with a full timeline takes tens of microseconds.
   */
  User copyForRollback() {
    User u = new User(getId().value(), community);
    u.followers = followers;
    u.followees = followees;
    u.own = own;
    u.timeline = timeline;
    u.shared = FOLLOWERS | FOLLOWEES | OWN | TIMELINE;
    shared = u.shared;
    return u;
  }

  /**
   * Follows or unfollows: adds or removes the follower's id here (this user followed) or the
   * followee's (this user following).
   *
   * @return false if there was nothing to change
   */
  boolean link(long other, boolean asFollowee, boolean add) {
    TreeSet<Long> ids;
    if (asFollowee) {
      followees = take(FOLLOWEES) ? new TreeSet<>(followees) : followees;
      ids = followees;
    } else {
      followers = take(FOLLOWERS) ? new TreeSet<>(followers) : followers;
      ids = followers;
    }
    return add ? ids.add(other) : ids.remove(other);
  }

  void addToTimeline(Post p) {
    timeline = take(TIMELINE) ? new ArrayList<>(timeline) : timeline;
    insert(timeline, p, TIMELINE_MAX);
  }

  void addOwn(Post p) {
    own = take(OWN) ? new ArrayList<>(own) : own;
    insert(own, p, OWN_POSTS_MAX);
  }

  void removeAuthorFromTimeline(long author) {
    timeline = take(TIMELINE) ? new ArrayList<>(timeline) : timeline;
    timeline.removeIf(p -> p.author() == author);
  }

  /** True, once, if a rollback copy shares that collection: the caller copies it before writing. */
  private boolean take(int which) {
    boolean was = (shared & which) != 0;
    shared &= ~which;
    return was;
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
