package io.eyrie.chirper;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Chirper's command line:
 *
 * <pre>
 * chirper demo [--duration 30s] [--users 1000] [--partitions 4] [--mode dssmr|ssmr] ...
 * chirper node --cluster FILE --id N [--storage DIR]
 * chirper adduser|post|follow|unfollow|timeline --cluster FILE ARGS...
 * chirper load --cluster FILE --workload timeline|post|follow|mix --mode dssmr|ssmr --clients N --duration D
 * </pre>
 *
 * Every subcommand explains itself with {@code --help}. Exit codes: 0 success, 1 the command
 * failed, 2 the command line is wrong.
 */
public final class ChirperMain {
  private static final Map<String, Subcommand> COMMANDS = new LinkedHashMap<>();

  static {
    for (Subcommand c : List.of(new DemoCommand(), new NodeCommand(), new LoadCommand(), SingleCommand.adduser(),
        SingleCommand.post(), SingleCommand.follow(), SingleCommand.unfollow(), SingleCommand.timeline())) {
      COMMANDS.put(c.name(), c);
    }
  }

  private ChirperMain() {}

  /**
   * Entry point; exits with the subcommand's exit code.
   *
   * @param args the command line
   */
  public static void main(String[] args) {
    System.setProperty("java.awt.headless", "true");
    System.exit(run(args, System.out, System.err));
  }

  /**
   * Runs a command line without exiting the JVM (for tests and embedding).
   *
   * @param args the command line
   * @param out where results go
   * @param err where problems go
   * @return the exit code: 0 success, 1 failure, 2 bad command line
   */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    if (args.length == 0) {
      overview(err);
      return 2;
    }
    if (args[0].equals("--help") || args[0].equals("-h") || args[0].equals("help")) {
      overview(out);
      return 0;
    }
    Subcommand cmd = COMMANDS.get(args[0]);
    if (cmd == null) {
      err.println("chirper: unknown command '" + args[0] + "'");
      overview(err);
      return 2;
    }
    try {
      Args a = Args.parse(Arrays.asList(args).subList(1, args.length), cmd.valued(), cmd.switches());
      if (a.help()) {
        out.println(cmd.usage());
        return 0;
      }
      return cmd.run(a, out, err);
    } catch (Args.UsageException e) {
      err.println("chirper " + cmd.name() + ": " + e.getMessage());
      err.println("(chirper " + cmd.name() + " --help shows the usage)");
      return 2;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      err.println("chirper " + cmd.name() + ": interrupted");
      return 1;
    } catch (Exception e) {
      err.println("chirper " + cmd.name() + ": failed: " + LoadRunner.unwrap(e));
      return 1;
    }
  }

  private static void overview(PrintStream out) {
    out.println("usage: chirper COMMAND [OPTIONS]   (chirper COMMAND --help for its options)");
    out.println();
    for (Subcommand c : COMMANDS.values()) {
      out.printf("  %-9s %s%n", c.name(), c.summary());
    }
  }
}
