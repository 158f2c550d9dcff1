package io.eyrie.chirper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.multicast.Codec;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What Chirper's partitions send each other for an S-SMR command: users without their timelines
 * (and own posts, except for a follow) for posts and (un)follows, which only write timelines where
 * the user lives, and whole users
 * for a timeline read sent to several partitions. {@code ChirperSemanticsTest} checks that both
 * modes end with the same timelines.
 */
@Timeout(10)
class ChirperCopyTest {
  private final ChirperServer server = new ChirperServer();

  private static User userWithATimeline() {
    User u = new User(1, 3);
    u.link(2L, false, true);
    u.link(4L, true, true);
    u.addOwn(new Post(10, 1, 5, "mine"));
    for (int i = 0; i < 30; i++) {
      u.addToTimeline(new Post(100 + i, 4, i, "x".repeat(100)));
    }
    return u;
  }

  @Test
  void writesGetUsersWithoutTimelinesAndReadsGetWholeUsers() {
    Codec codec = new Codec(new ChirperService().get().registry());
    User u = userWithATimeline();
    Command post = Command.access(new Ops.PostOp(new Post(11, 1, 6, "hi")), List.of(ObjId.valueOf(1), ObjId.valueOf(2)));
    User copy = (User) server.copyForPartitions(u, post);
    assertTrue(copy.timeline().isEmpty());
    assertEquals(u.followers(), copy.followers());
    assertEquals(u.followees(), copy.followees());
    assertTrue(copy.own.isEmpty(), "only a follow reads the own posts");
    assertEquals(30, u.timeline().size(), "the user itself is untouched");
    int whole = codec.encode(u).length;
    int light = codec.encode(copy).length;
    assertTrue(light * 4 < whole, () -> light + " of " + whole + " bytes");
    Command follow = Command.access(new Ops.Follow(2, 1), List.of(ObjId.valueOf(1), ObjId.valueOf(2)));
    User forFollow = (User) server.copyForPartitions(u, follow);
    assertTrue(forFollow.timeline().isEmpty());
    assertEquals(u.own, forFollow.own, "a follow copies the followee's own posts into the follower's timeline");
    Command unfollow = Command.access(new Ops.Unfollow(2, 1), List.of(ObjId.valueOf(1), ObjId.valueOf(2)));
    assertTrue(((User) server.copyForPartitions(u, unfollow)).own.isEmpty());
    Command read = Command.access(new Ops.GetTimeline(1), List.of(ObjId.valueOf(1)));
    assertSame(u, server.copyForPartitions(u, read));
  }

  /** The copy a failed command puts back: the same user, unchanged by later writes to the original. */
  @Test
  void theCopyForRollbackKeepsTheStateBeforeTheCommand() {
    Codec codec = new Codec(new ChirperService().get().registry());
    User u = userWithATimeline();
    byte[] before = codec.encode(u);
    User copy = (User) server.copyForRollback(u);
    writeEverything(u, 9L);
    assertEquals(java.util.Arrays.toString(before), java.util.Arrays.toString(codec.encode(copy)),
        "the copy holds exactly the state before the writes");
  }

  /**
   * The copy shares what the command does not write: a post's write to a timeline copies that
   * timeline alone. And once put back, the copy's own writes leave the user it replaced alone.
   */
  @Test
  void theCopyForRollbackSharesWhatIsNotWrittenAndTheUsersStayApart() {
    Codec codec = new Codec(new ChirperService().get().registry());
    User u = userWithATimeline();
    User copy = (User) server.copyForRollback(u);
    u.addToTimeline(new Post(300, 4, 120, "new"));
    assertSame(copy.followers, u.followers, "a post does not copy the followers");
    assertSame(copy.followees, u.followees);
    assertSame(copy.own, u.own);
    assertNotSame(copy.timeline, u.timeline, "the timeline written is the user's own now");
    byte[] written = codec.encode(u);
    writeEverything(copy, 77L);
    assertEquals(java.util.Arrays.toString(written), java.util.Arrays.toString(codec.encode(u)),
        "writes to the copy put back do not reach the user it replaced");
    assertFalse(u.followers().contains(77L));
  }

  /** Writes every collection of a user: a follower and a followee {@code other}, an own post, its timeline. */
  private static void writeEverything(User u, long other) {
    u.link(other, false, true);
    u.link(other, true, true);
    u.addOwn(new Post(other + 1000, 1, other, "later"));
    u.addToTimeline(new Post(other + 2000, 4, other, "later"));
    u.removeAuthorFromTimeline(4);
  }
}
