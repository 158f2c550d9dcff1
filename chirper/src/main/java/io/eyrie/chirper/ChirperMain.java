package io.eyrie.chirper;

import io.eyrie.tools.CommandLine;
import java.io.PrintStream;
import java.util.List;

/**
 * Chirper's command line:
 *
 * <pre>
 * chirper demo [--duration 30s] [--users 1000] [--partitions 4] [--mode dssmr|ssmr] ...
 * chirper node --cluster FILE --id N [--data DIR]
 * chirper adduser|post|follow|unfollow|timeline --cluster FILE ARGS...
 * chirper load --cluster FILE --workload timeline|post|follow|mix --mode dssmr|ssmr --clients N --duration D
 * </pre>
 *
 * Every subcommand explains itself with {@code --help}. Exit codes: 0 success, 1 the command
 * failed, 2 the command line is wrong.
 */
public final class ChirperMain {
  private static final List<Subcommand> COMMANDS = List.of(new DemoCommand(), new NodeCommand(), new LoadCommand(),
      SingleCommand.adduser(), SingleCommand.post(), SingleCommand.follow(), SingleCommand.unfollow(),
      SingleCommand.timeline());

  private ChirperMain() {}

  /**
   * Entry point; exits with the subcommand's exit code.
   *
   * @param args the command line
   */
  public static void main(String[] args) {
    System.setProperty("java.awt.headless", "true");
    // A node tells its operator what happens to its groups (eyrie-tools' node logging: INFO from
    // Eyrie, Ratis's real faults); the other subcommands keep stderr for real problems only.
    if (args.length > 0 && args[0].equals("node") && System.getProperty("logback.configurationFile") == null) {
      System.setProperty("logback.configurationFile", "eyrie-logback.xml");
    }
    io.eyrie.multicast.Node.prepareJvm();
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
    return new CommandLine("chirper", COMMANDS).run(args, out, err);
  }
}
