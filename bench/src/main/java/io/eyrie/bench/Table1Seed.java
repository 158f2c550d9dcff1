package io.eyrie.bench;

import io.eyrie.chirper.Ops;
import io.eyrie.chirper.SocialGraph;
import io.eyrie.core.Client;
import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.Reply;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Table 1's initial state: the social graph bulk-loaded with its edges ({@code Ops.SeedUser}),
 * each user in a partition chosen by a hash of its id, not by its community, so that S-SMR keeps
 * a placement with no locality and DS-SMR has to find it.
 */
final class Table1Seed {
  private Table1Seed() {}

  /** The partition a user starts in: a hash of its id (independent of its community). */
  static int slot(long user, int partitions) {
    long h = user * 0x9E3779B97F4A7C15L;
    return (int) Math.floorMod(h >>> 32, (long) partitions);
  }

  /** Bulk-loads the graph: one create per user, with its edges, in its hashed partition. */
  static void seed(SocialGraph g, Client proxy, int partitions) throws Exception {
    int users = g.params().users();
    List<TreeSet<Long>> followers = new ArrayList<>();
    List<TreeSet<Long>> followees = new ArrayList<>();
    for (int u = 0; u < users; u++) {
      followers.add(new TreeSet<>());
      followees.add(new TreeSet<>());
    }
    for (long[] e : g.follows()) {
      followees.get((int) e[0]).add(e[1]);
      followers.get((int) e[1]).add(e[0]);
    }
    List<CompletableFuture<Reply>> inFlight = new ArrayList<>();
    io.eyrie.chirper.ProgressLine.Loading line = new io.eyrie.chirper.ProgressLine.Loading(System.out, "loading the graph: users", users);
    for (int u = 0; u < users; u++) {
      Ops.SeedUser s = new Ops.SeedUser(u, g.community(u), slot(u, partitions),
          followers.get(u).stream().mapToLong(Long::longValue).toArray(),
          followees.get(u).stream().mapToLong(Long::longValue).toArray());
      inFlight.add(proxy.sendCreate(Command.create(ObjId.valueOf(u), s)));
      if (inFlight.size() == 128 || u == users - 1) {
        for (CompletableFuture<Reply> f : inFlight) {
          Reply r = f.get(120, TimeUnit.SECONDS);
          if (!r.isOk()) {
            throw new IllegalStateException("seeding a user failed: " + r.reason());
          }
          line.advance();
        }
        inFlight.clear();
      }
    }
  }
}
