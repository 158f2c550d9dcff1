package io.eyrie.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.chirper.ChirperMain;
import io.eyrie.tools.EyrieMain;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every command of bin/eyrie, bin/chirper and bin/bench (and so bin/demo) answers
 * {@code --help} with its usage and exit 0, and refuses a bogus option with one
 * line on stderr and exit 2, before doing any work: no thread starts, no file appears, and it
 * returns at once (a benchmark or a node would take seconds to minutes).
 */
@Timeout(120)
class CommandLinesTest {
  private static final List<String> EYRIE = List.of("node", "status", "audit", "partition");
  private static final List<String> CHIRPER = List.of("demo", "node", "load", "adduser", "post", "follow",
      "unfollow", "timeline");
  private static final List<String> BENCH = List.of("multicast", "table1", "community-shift", "elastic", "bank-placement", "micro");

  private record Result(int code, String out, String err) {}

  private static Result run(Function<PrintStream[], Integer> main) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = main.apply(new PrintStream[] {new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8)});
    return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private interface Program {
    int run(String[] args, PrintStream out, PrintStream err);
  }

  private static void check(String program, Program p, List<String> commands) {
    for (String c : commands) {
      Set<String> threadsBefore = threads();
      Set<String> filesBefore = files();
      long start = System.nanoTime();
      Result help = run(s -> p.run(new String[] {c, "--help"}, s[0], s[1]));
      assertEquals(0, help.code(), program + " " + c + " --help: " + help.err());
      assertTrue(help.out().startsWith("usage: "), program + " " + c + " --help printed " + help.out());
      Result bogus = run(s -> p.run(new String[] {c, "--bogus-option", "1"}, s[0], s[1]));
      assertEquals(2, bogus.code(), program + " " + c + " --bogus-option: " + bogus.out() + bogus.err());
      assertEquals(1, bogus.err().lines().count(), program + " " + c + ": a one-line error, got " + bogus.err());
      assertTrue(bogus.err().contains("--bogus-option"), bogus.err());
      assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5), program + " " + c + " did some work");
      assertEquals(filesBefore, files(), program + " " + c + " created files");
      Set<String> started = threads();
      started.removeAll(threadsBefore);
      assertTrue(started.isEmpty(), program + " " + c + " started threads " + started);
    }
    Result overview = run(s -> p.run(new String[] {"--help"}, s[0], s[1]));
    assertEquals(0, overview.code());
    commands.forEach(c -> assertTrue(overview.out().contains(c), program + " --help lists " + c));
    Result version = run(s -> p.run(new String[] {"--version"}, s[0], s[1]));
    assertEquals(0, version.code());
    Result unknown = run(s -> p.run(new String[] {"no-such-command"}, s[0], s[1]));
    assertEquals(2, unknown.code());
    assertEquals(1, unknown.err().lines().count(), unknown.err());
  }

  /**
   * Live threads, by name, without the helpers that come and go on their own: the JVM's, and
   * Netty's global executor, which an earlier test in this JVM may have woken and which quits
   * after a second idle (CI once saw it appear during a check). A command that did start work
   * would start threads of its own (event loops, Ratis, benchmark clients), which still count.
   */
  private static Set<String> threads() {
    Set<String> names = new TreeSet<>();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      String name = t.getName();
      if (t.isAlive() && !name.startsWith("ForkJoinPool") && !name.equals("process reaper")
          && !name.startsWith("globalEventExecutor")) {
        names.add(t.getName());
      }
    }
    return names;
  }

  private static Set<String> files() {
    Set<String> names = new TreeSet<>();
    String[] here = new File(".").list();
    if (here != null) {
      names.addAll(List.of(here));
    }
    return names;
  }

  @Test
  void eyrie() {
    check("eyrie", EyrieMain::run, EYRIE);
  }

  @Test
  void chirper() {
    check("chirper", ChirperMain::run, CHIRPER);
  }

  @Test
  void benchAndDemo() {
    check("bench", BenchMain::run, BENCH);
    Result jmh = run(s -> BenchMain.run(new String[] {"jmh", "--help"}, s[0], s[1]));
    assertEquals(0, jmh.code());
  }
}
