package io.eyrie.chirper;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.PRObject;
import io.eyrie.core.StateMachine;
import java.util.ArrayList;
import java.util.List;

/** Chirper's partition server: fan-out on write, materialized timelines, all deterministic. */
public final class ChirperServer extends StateMachine {

  @Override
  protected Object executeCommand(Command c) {
    Object op = c.op();
    if (op instanceof Ops.GetTimeline g) {
      User u = user(g.user());
      return u.timeline.toArray(new Post[0]);
    }
    if (op instanceof Ops.PostOp p) {
      User author = user(p.post().author());
      List<ObjId> missing = new ArrayList<>();
      for (long f : author.followers) {
        if (!c.objects().contains(ObjId.valueOf(f))) {
          missing.add(ObjId.valueOf(f));
        }
      }
      if (!missing.isEmpty()) {
        // Fan-out needs every follower here: ask the proxy to co-locate them and retry.
        return retry(missing);
      }
      author.addOwn(p.post());
      author.addToTimeline(p.post());
      for (long f : author.followers) {
        user(f).addToTimeline(p.post());
      }
      return author.followers.size();
    }
    if (op instanceof Ops.Follow f) {
      User u = user(f.user());
      User v = user(f.followee());
      if (f.user() == f.followee() || !u.link(f.followee(), true, true)) {
        return false;
      }
      v.link(f.user(), false, true);
      for (Post p : v.own) {
        u.addToTimeline(p);
      }
      return true;
    }
    if (op instanceof Ops.Unfollow f) {
      User u = user(f.user());
      User v = user(f.followee());
      if (!u.link(f.followee(), true, false)) {
        return false;
      }
      v.link(f.user(), false, false);
      u.removeAuthorFromTimeline(f.followee());
      return true;
    }
    throw new IllegalArgumentException("unknown Chirper operation " + op);
  }

  private User user(long id) {
    User u = (User) getObject(ObjId.valueOf(id));
    if (u == null) {
      throw new IllegalArgumentException("user " + id + " is not part of the command");
    }
    return u;
  }

  @Override
  protected PRObject copyForPartitions(PRObject object, Command command) {
    // Posts and (un)follows only write timelines, and only where the user lives; only a follow
    // reads another user's own posts; a read of a timeline sent to several partitions (the
    // fallback) needs the whole user.
    Object op = command.op();
    if (!(object instanceof User u)) {
      return object;
    }
    if (op instanceof Ops.PostOp || op instanceof Ops.Unfollow) {
      return u.lightCopy(false);
    }
    return op instanceof Ops.Follow ? u.lightCopy(true) : u;
  }

  /**
   * No check after each command: a user holds only registered types (ids, posts), and its
   * posts are bounded (its followers grow with the graph, well below what a channel item
   * carries). The check would encode every user a post writes, tripling a post's CPU
   * (bench/RESULTS.md, issue 26).
   */
  @Override
  protected boolean checkObjectsAfterCommands() {
    return false;
  }

  @Override
  protected PRObject copyForRollback(PRObject object) {
    return object instanceof User u ? u.copyForRollback() : null;
  }

  @Override
  protected PRObject createObject(Command c) {
    if (c.op() instanceof Ops.SeedUser s) {
      User u = new User(s.user(), s.community());
      for (long f : s.followers()) {
        u.link(f, false, true);
      }
      for (long f : s.followees()) {
        u.link(f, true, true);
      }
      return u;
    }
    Ops.NewUser n = (Ops.NewUser) c.op();
    return new User(n.user(), n.community());
  }
}
