package io.eyrie.chirper;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
    u.followers.add(2L);
    u.followees.add(4L);
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
    u.followers.add(9L);
    u.followees.add(8L);
    u.addOwn(new Post(12, 1, 7, "later"));
    u.addToTimeline(new Post(200, 4, 99, "later"));
    u.removeAuthorFromTimeline(4);
    assertEquals(java.util.Arrays.toString(before), java.util.Arrays.toString(codec.encode(copy)),
        "the copy holds exactly the state before the writes");
  }
}
