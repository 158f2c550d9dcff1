package io.eyrie.chirper;

import io.eyrie.core.Client;
import io.eyrie.core.Reply;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.tools.Args;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeoutException;

/**
 * {@code chirper adduser|post|follow|unfollow|timeline}: one command against a running cluster,
 * with its result printed for a person. Exit code 1 if the cluster refused the command or did not
 * answer in time.
 */
record SingleCommand(String name, String operands, String summary, int ids, boolean textAfter, Action action)
    implements Subcommand {
  /** Runs the command with a connected client. */
  private interface Action {
    int run(ChirperClient c, List<Long> ids, List<String> rest, PrintStream out, PrintStream err) throws Exception;
  }

  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss")
      .withZone(ZoneId.systemDefault());

  static SingleCommand adduser() {
    return new SingleCommand("adduser", "USER [COMMUNITY]", "create a user (in a community: its partition)", 1, true,
        (c, ids, rest, out, err) -> {
          int community = rest.isEmpty() ? (int) (ids.get(0) % 8) : parseInt(rest.get(0));
          Reply r = c.createUser(ids.get(0), community).get();
          if (!r.isOk()) {
            err.println("user " + ids.get(0) + " exists already");
            return 1;
          }
          out.println("created user " + ids.get(0) + " in community " + community);
          return 0;
        });
  }

  static SingleCommand post() {
    return new SingleCommand("post", "USER TEXT...", "USER posts TEXT to its followers' timelines", 1, true,
        (c, ids, rest, out, err) -> {
          if (rest.isEmpty()) {
            throw new Args.UsageException("post needs a text");
          }
          Post p = c.newPost(ids.get(0), String.join(" ", rest));
          Reply r = c.post(p).get();
          if (!r.isOk()) {
            err.println("refused: " + r.reason());
            return 1;
          }
          out.println("user " + p.author() + " posted #" + Long.toHexString(p.id()) + ", delivered to " + r.value()
              + " follower timeline(s)");
          return 0;
        });
  }

  static SingleCommand follow() {
    return new SingleCommand("follow", "USER FOLLOWEE", "USER starts following FOLLOWEE", 2, false,
        (c, ids, rest, out, err) -> {
          Reply r = c.follow(ids.get(0), ids.get(1)).get();
          return report(r, out, err, "user " + ids.get(0) + " now follows user " + ids.get(1),
              "user " + ids.get(0) + " already follows user " + ids.get(1) + " (or is that user)");
        });
  }

  static SingleCommand unfollow() {
    return new SingleCommand("unfollow", "USER FOLLOWEE", "USER stops following FOLLOWEE", 2, false,
        (c, ids, rest, out, err) -> {
          Reply r = c.unfollow(ids.get(0), ids.get(1)).get();
          return report(r, out, err, "user " + ids.get(0) + " no longer follows user " + ids.get(1),
              "user " + ids.get(0) + " did not follow user " + ids.get(1));
        });
  }

  static SingleCommand timeline() {
    return new SingleCommand("timeline", "USER", "print USER's timeline, newest first", 1, false,
        (c, ids, rest, out, err) -> {
          List<Post> posts = c.timeline(ids.get(0)).get();
          out.println("timeline of user " + ids.get(0) + ": " + posts.size() + " post(s), newest first");
          for (Post p : posts) {
            out.printf("  %s  @%-6d %s   (#%s)%n", TIME.format(Instant.ofEpochMilli(p.time())), p.author(), p.text(),
                Long.toHexString(p.id()));
          }
          return 0;
        });
  }

  private static int report(Reply r, PrintStream out, PrintStream err, String changed, String unchanged) {
    if (!r.isOk()) {
      err.println("refused: " + r.reason());
      return 1;
    }
    out.println(Boolean.TRUE.equals(r.value()) ? changed : unchanged);
    return 0;
  }

  @Override
  public String usage() {
    return "usage: chirper " + name + " --cluster FILE [--mode dssmr|ssmr] [--timeout D] " + operands + "\n\n  "
        + summary + ".\n\n"
        + "  --cluster FILE   the cluster file of the running cluster, e.g. conf/chirper-3.conf\n"
        + "  --mode M         dssmr (default) or ssmr\n"
        + "  --timeout D      give up after D (default 30s; the outcome is then unknown)";
  }

  @Override
  public Set<String> valued() {
    return Set.of("cluster", "mode", "timeout");
  }

  @Override
  public int run(Args a, PrintStream out, PrintStream err) throws Exception {
    List<String> pos = a.positional();
    if (pos.size() < ids || (!textAfter && pos.size() > ids)) {
      throw new Args.UsageException("expected " + operands + ", got " + (pos.isEmpty() ? "nothing" : pos));
    }
    if (name.equals("adduser") && pos.size() > 2) {
      throw new Args.UsageException("expected " + operands + ", got " + pos);
    }
    List<Long> parsed = new ArrayList<>();
    for (String s : pos.subList(0, ids)) {
      parsed.add(parseUser(s));
    }
    ClusterConfig cluster = cluster(a);
    long timeoutMs = a.duration("timeout", java.time.Duration.ofSeconds(30), java.time.Duration.ofMillis(100))
        .toMillis();
    try (ChirperClient c = new ChirperClient(Client.newBuilder().cluster(cluster).service(new ChirperService().get())
        .mode(LoadSession.mode(a, Client.Mode.DSSMR)).totalTimeoutMs(timeoutMs).build())) {
      return action.run(c, parsed, pos.subList(ids, pos.size()), out, err);
    } catch (java.util.concurrent.ExecutionException e) {
      Throwable cause = LoadRunner.unwrap(e.getCause());
      if (cause instanceof TimeoutException) {
        err.println("no answer within " + timeoutMs + " ms: the outcome is unknown (is the cluster running?)");
      } else {
        err.println("failed: " + (cause.getMessage() != null ? cause.getMessage() : cause));
      }
      return 1;
    }
  }

  /** Reads {@code --cluster FILE}. */
  static ClusterConfig cluster(Args a) throws Args.UsageException, IOException {
    Path file = Path.of(a.required("cluster"));
    if (!Files.isRegularFile(file)) {
      throw new Args.UsageException("no cluster file " + file.toAbsolutePath());
    }
    try {
      return ClusterConfig.load(file);
    } catch (IllegalArgumentException e) {
      throw new Args.UsageException(file + ": " + e.getMessage());
    }
  }

  private static long parseUser(String s) throws Args.UsageException {
    try {
      return Long.parseLong(s);
    } catch (NumberFormatException e) {
      throw new Args.UsageException("a user is a number, got '" + s + "'");
    }
  }

  private static int parseInt(String s) throws Args.UsageException {
    try {
      return Integer.parseInt(s);
    } catch (NumberFormatException e) {
      throw new Args.UsageException("expected a number, got '" + s + "'");
    }
  }
}
