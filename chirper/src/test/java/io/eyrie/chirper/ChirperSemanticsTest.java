package io.eyrie.chirper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Client;
import io.eyrie.core.ClientStats;
import io.eyrie.multicast.EmbeddedCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Chirper's semantics on an embedded cluster, identical in DS-SMR and S-SMR modes. */
@Timeout(240)
class ChirperSemanticsTest {

  static EmbeddedCluster cluster() {
    return EmbeddedCluster.newBuilder().nodes(3).partitions(3).oracle(true)
        .app(new ChirperService().get()).start();
  }

  /** A DS-SMR chirper client of the cluster. */
  static ChirperClient dssmr(EmbeddedCluster c) {
    return new ChirperClient(c.cluster(), Client.Mode.DSSMR);
  }

  static <T> T get(java.util.concurrent.CompletableFuture<T> f) throws Exception {
    return f.get(60, TimeUnit.SECONDS);
  }

  /** Runs a fixed script; returns every user's final timeline (post ids). */
  static Map<Long, List<Long>> script(EmbeddedCluster c, Client.Mode mode) throws Exception {
    try (ChirperClient ch = new ChirperClient(c.cluster(), mode)) {
      for (long u = 0; u < 6; u++) {
        assertTrue(get(ch.createUser(u, (int) (u % 3))).isOk());
      }
      long t = 1_000;
      long id = 1;
      assertTrue((Boolean) get(ch.follow(1, 0)).value());
      assertTrue((Boolean) get(ch.follow(2, 0)).value());
      assertTrue((Boolean) get(ch.follow(3, 1)).value());
      // follow then post: the post reaches the follower
      assertEquals(2, get(ch.post(new Post(id++, 0, t++, "hello from 0"))).value());
      List<Post> tl1 = get(ch.timeline(1));
      assertEquals(1, tl1.size());
      assertEquals("hello from 0", tl1.get(0).text());
      // unfollow removes it
      assertTrue((Boolean) get(ch.unfollow(2, 0)).value());
      assertTrue(get(ch.timeline(2)).isEmpty(), "unfollow removes the followee's posts");
      // a new follower gets the followee's recent posts
      assertTrue((Boolean) get(ch.follow(4, 0)).value());
      assertEquals(1, get(ch.timeline(4)).size());
      // newest first and bounded
      for (int i = 0; i < User.TIMELINE_MAX + 10; i++) {
        get(ch.post(new Post(id++, 1, t++, "post " + i)));
      }
      List<Post> tl3 = get(ch.timeline(3));
      assertEquals(User.TIMELINE_MAX, tl3.size(), "timelines are bounded");
      for (int i = 1; i < tl3.size(); i++) {
        assertTrue(tl3.get(i - 1).time() > tl3.get(i).time(), "newest first");
      }
      assertEquals("post " + (User.TIMELINE_MAX + 9), tl3.get(0).text());
      get(ch.follow(5, 1));
      get(ch.follow(5, 0));
      get(ch.post(new Post(id++, 0, t++, "last")));
      Map<Long, List<Long>> out = new TreeMap<>();
      for (long u = 0; u < 6; u++) {
        List<Long> ids = new ArrayList<>();
        for (Post p : get(ch.timeline(u))) {
          ids.add(p.id());
        }
        out.put(u, ids);
      }
      System.out.println(mode + " stats: " + ch.proxy().stats());
      return out;
    }
  }

  @Test
  void sameScriptSameTimelinesInBothModes() throws Exception {
    Map<Long, List<Long>> dssmr;
    Map<Long, List<Long>> ssmr;
    try (EmbeddedCluster c = cluster()) {
      dssmr = script(c, Client.Mode.DSSMR);
    }
    try (EmbeddedCluster c = cluster()) {
      ssmr = script(c, Client.Mode.SSMR);
    }
    assertEquals(dssmr, ssmr);
    // user 5 followed 1 (whose last OWN_POSTS_MAX posts it received) and 0 ("hello", then "last")
    assertEquals(User.OWN_POSTS_MAX + 2, dssmr.get(5L).size());
    assertEquals(Long.valueOf(User.TIMELINE_MAX + 12), dssmr.get(5L).get(0), "the last post is first");
  }

  @Test
  void postsNameTheFollowersTheClientLearnedAndStayCorrectWhenTheyChange() throws Exception {
    withTwoClients((c, a, b) -> {
      for (long u = 0; u < 4; u++) {
        // One community, bulk-loaded in different partitions: commands gather them in its home.
        seed(a, u, 0, (int) u % 3, new long[0], new long[0]);
      }
      get(a.follow(1, 0));
      get(a.follow(2, 0));
      assertEquals(null, a.knownFollowers(0), "nothing learned before the first post");
      long id = 1;
      long retriesBefore = a.proxy().stats().retries();
      assertEquals(2, get(a.post(new Post(id++, 0, 1, "first"))).value());
      assertTrue(a.proxy().stats().retries() > retriesBefore, "the first post learns the followers by a retry");
      assertEquals(java.util.Set.of(1L, 2L), a.knownFollowers(0));
      // The followers are now with their author: the next post goes straight there.
      long direct = a.proxy().stats().direct();
      long retries = a.proxy().stats().retries();
      assertEquals(2, get(a.post(new Post(id++, 0, 2, "second"))).value());
      assertEquals(retries, a.proxy().stats().retries(), "no retry with the followers named");
      assertEquals(direct + 1, a.proxy().stats().direct(), "executed at once in one partition");
      // Another client changes the followers: one leaves, one joins.
      assertTrue((Boolean) get(b.unfollow(2, 0)).value());
      assertTrue((Boolean) get(b.follow(3, 0)).value());
      assertEquals(2, get(a.post(new Post(id++, 0, 3, "third"))).value(), "reaches 1 and the new follower 3");
      assertEquals(List.of(3L, 2L, 1L), ids(get(a.timeline(1))));
      assertEquals(List.of(), ids(get(a.timeline(2))), "unfollowed: 0's posts removed");
      assertEquals(List.of(3L, 2L, 1L), ids(get(a.timeline(3))), "a new follower gets the recent posts, then the new one");
      // The stale entry (2) was dropped when the reply showed fewer followers than named.
      assertEquals(null, a.knownFollowers(0));
      assertEquals(2, get(a.post(new Post(id++, 0, 4, "fourth"))).value());
      assertEquals(java.util.Set.of(1L, 3L), a.knownFollowers(0));
    });
  }

  @Test
  @Timeout(120)
  void seededUsersHaveTheirEdgesAndStartInTheChosenPartition() throws Exception {
    try (EmbeddedCluster c = cluster();
         ChirperClient a = dssmr(c)) {
      // 0 is followed by 1 and 2; seeded in partitions 0, 1 and 2 (slots), not by community
      assertTrue(get(a.proxy().sendCreate(io.eyrie.core.Command.create(io.eyrie.core.ObjId.valueOf(0),
          new Ops.SeedUser(0, 7, 0, new long[] {1, 2}, new long[0])))).isOk());
      assertTrue(get(a.proxy().sendCreate(io.eyrie.core.Command.create(io.eyrie.core.ObjId.valueOf(1),
          new Ops.SeedUser(1, 7, 1, new long[0], new long[] {0})))).isOk());
      assertTrue(get(a.proxy().sendCreate(io.eyrie.core.Command.create(io.eyrie.core.ObjId.valueOf(2),
          new Ops.SeedUser(2, 7, 2, new long[0], new long[] {0})))).isOk());
      java.util.List<io.eyrie.multicast.GroupId> parts = c.cluster().partitions();
      for (long u = 0; u < 3; u++) {
        assertTrue(get(a.timeline(u)).isEmpty()); // single-object reads: the client learns where u is
        assertEquals(parts.get((int) u), a.proxy().cachedLocation(io.eyrie.core.ObjId.valueOf(u)), "slot placement of " + u);
      }
      assertEquals(2, get(a.post(new Post(1, 0, 1, "to my seeded followers"))).value());
      assertEquals(List.of(1L), ids(get(a.timeline(1))));
      assertEquals(List.of(1L), ids(get(a.timeline(2))));
      assertFalse((Boolean) get(a.follow(1, 0)).value(), "the seeded edge exists");
    }
  }

  @Test
  @Timeout(120)
  void multiPartitionCommandsGatherUsersInTheirCommunityHome() throws Exception {
    withTwoClients((c, a, b) -> {
      java.util.List<io.eyrie.multicast.GroupId> parts = c.cluster().partitions();
      // Community 1's home is partition 1. Users 10 and 11 start in partition 0, 12 in
      // partition 2: the paper's rule (where most of them are) would gather a post of 10 in partition 0.
      seed(a, 10, 1, 0, new long[] {11, 12}, new long[0]);
      seed(a, 11, 1, 0, new long[0], new long[] {10});
      seed(a, 12, 1, 2, new long[0], new long[] {10});
      // Community 2's home is partition 2; 13 and 14 start in partitions 0 and 1 (a follow's
      // pair has no majority).
      seed(a, 13, 2, 0, new long[0], new long[0]);
      seed(a, 14, 2, 1, new long[0], new long[0]);
      get(b.timeline(13)); // b caches 13 in partition 0 and 14 in partition 1
      get(b.timeline(14));
      assertEquals(parts.get(0), b.proxy().cachedLocation(io.eyrie.core.ObjId.valueOf(13)));
      assertEquals(2, get(a.post(new Post(100, 10, 1, "gathered"))).value());
      assertTrue((Boolean) get(a.follow(13, 14)).value());
      // b's cache is stale and spread over two partitions: b asks the oracle instead of moving
      // users on its own (which would pull one of them out of its home again).
      long movesBefore = b.proxy().stats().moves();
      assertTrue((Boolean) get(b.follow(14, 13)).value());
      assertEquals(movesBefore, b.proxy().stats().moves(), "no move by the stale client");
      for (long u = 10; u <= 14; u++) {
        get(b.timeline(u)); // a fresh client asks the oracle where u is
        int community = u <= 12 ? 1 : 2;
        assertEquals(parts.get(community), b.proxy().cachedLocation(io.eyrie.core.ObjId.valueOf(u)), "user " + u);
      }
      assertEquals(List.of(100L), ids(get(b.timeline(11))));
      assertEquals(List.of(100L), ids(get(b.timeline(12))));
    });
  }

  @Test
  @Timeout(120)
  void commandsAcrossCommunityHomesRunWhereTheUsersAreAndMoveNobody() throws Exception {
    withTwoClients((c, a, b) -> {
      java.util.List<io.eyrie.multicast.GroupId> parts = c.cluster().partitions();
      // Three users in the homes of communities 0, 1 and 2 (partitions 0, 1 and 2), and 23,
      // of community 1, bulk-loaded away from home in partition 0.
      for (long u = 20; u <= 22; u++) {
        assertTrue(get(a.createUser(u, (int) (u - 20))).isOk());
      }
      seed(a, 23, 1, 0, new long[0], new long[0]);
      // Across homes: under majority-gathering a follow's pair has no majority, and the default
      // rule moves one of them out of its home.
      assertTrue((Boolean) get(a.follow(20, 21)).value());
      assertTrue((Boolean) get(a.follow(22, 21)).value());
      assertTrue((Boolean) get(a.follow(23, 22)).value());
      assertEquals(2, get(a.post(new Post(200, 21, 1, "across homes"))).value()); // 20 and 22
      assertEquals(1, get(a.post(new Post(201, 22, 2, "to 23"))).value());
      ClientStats s = a.proxy().stats();
      assertEquals(0, s.moves(), "nobody moves for a command across community homes: " + s);
      assertTrue(s.multiPartition() >= 5, "they ran with S-SMR where the users are: " + s);
      assertEquals(0, s.fallbacks(), "on their users' partitions, not as a fallback to every partition: " + s);
      for (long u = 20; u <= 23; u++) {
        get(b.timeline(u)); // a fresh client asks the oracle where u is
        int where = u == 23 ? 0 : (int) (u - 20);
        assertEquals(parts.get(where), b.proxy().cachedLocation(io.eyrie.core.ObjId.valueOf(u)), "user " + u);
      }
      assertEquals(List.of(200L), ids(get(b.timeline(20))));
      assertEquals(List.of(201L, 200L), ids(get(b.timeline(22))), "its own post and 21's");
      assertEquals(List.of(201L), ids(get(b.timeline(23))));
      // Within one community's home: 23 is gathered back home by its follow of 21.
      assertTrue((Boolean) get(a.follow(23, 21)).value());
      assertEquals(1, a.proxy().stats().moves(), "23 went home");
      b.proxy().clearLocationCache();
      get(b.timeline(23));
      assertEquals(parts.get(1), b.proxy().cachedLocation(io.eyrie.core.ObjId.valueOf(23)), "23 is home");
      assertEquals(List.of(201L, 200L), ids(get(b.timeline(23))), "the follow brought 21's post");
    });
  }

  /** An oracle replica as a node would create it (it needs its cluster and codec to snapshot). */
  private static ChirperOracle oracle() {
    ChirperOracle o = new ChirperOracle();
    o.init(io.eyrie.multicast.GroupId.valueOf("oracle"), io.eyrie.multicast.ClusterConfig.parse("""
        node 1 127.0.0.1 raft=1 client=2
        group oracle oracle 1
        group p0 partition 1
        """), new io.eyrie.multicast.Codec(new ChirperService().get().registry()));
    return o;
  }

  @Test
  void theOracleKeepsCommunitiesInItsSnapshot() {
    ChirperOracle o = oracle();
    o.created(io.eyrie.core.Command.create(io.eyrie.core.ObjId.valueOf(5), new Ops.NewUser(5, 9)), null);
    o.created(io.eyrie.core.Command.create(io.eyrie.core.ObjId.valueOf(6),
        new Ops.SeedUser(6, 3, 0, new long[0], new long[0])), null);
    o.created(io.eyrie.core.Command.create(io.eyrie.core.ObjId.valueOf(7), new Ops.NewUser(7, 4)), null);
    o.deleted(io.eyrie.core.ObjId.valueOf(7));
    ChirperOracle r = oracle();
    r.restore(o.snapshot());
    assertEquals(9, r.communityOf(5));
    assertEquals(3, r.communityOf(6));
    assertEquals(null, r.communityOf(7));
    assertTrue(java.util.Arrays.equals(o.snapshot(), r.snapshot()));
  }

  /** A case with a fresh cluster and two DS-SMR clients a and b. */
  private interface TwoClients {
    void run(EmbeddedCluster c, ChirperClient a, ChirperClient b) throws Exception;
  }

  private static void withTwoClients(TwoClients test) throws Exception {
    try (EmbeddedCluster c = cluster();
         ChirperClient a = dssmr(c);
         ChirperClient b = dssmr(c)) {
      test.run(c, a, b);
    }
  }

  private static void seed(ChirperClient a, long u, int community, int slot, long[] followers, long[] followees)
      throws Exception {
    assertTrue(get(a.proxy().sendCreate(io.eyrie.core.Command.create(io.eyrie.core.ObjId.valueOf(u),
        new Ops.SeedUser(u, community, slot, followers, followees)))).isOk());
  }

  private static List<Long> ids(List<Post> timeline) {
    List<Long> out = new ArrayList<>();
    timeline.forEach(p -> out.add(p.id()));
    return out;
  }
}
