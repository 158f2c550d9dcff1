package io.eyrie.tools;

import java.io.PrintStream;
import java.util.List;

/**
 * {@code bin/eyrie}: the operator's command line.
 *
 * <pre>
 * eyrie node   --cluster FILE --id N --service CLASS [--data DIR] [--metrics-port P]
 * eyrie status --cluster FILE [--locate ID]
 * eyrie audit  --cluster FILE
 * eyrie partition list|add|retire|drain --cluster FILE [--group NAME] ...
 * eyrie certs  --out DIR [--nodes 1,2,3] [--admin ops] [--client app] [--hosts H,...] [--days N]
 * eyrie --version
 * </pre>
 *
 * Every command explains itself with {@code --help}. Exit codes: 0 success, 1 the command
 * failed (or found a problem), 2 the command line is wrong.
 */
public final class EyrieMain {
  private EyrieMain() {}

  /** The commands, in the overview's order. */
  static CommandLine commandLine() {
    return new CommandLine("eyrie", List.of(new NodeCommand(), new StatusCommand(), new AuditCommand(),
        new PartitionCommand(), new CertsCommand()));
  }

  /**
   * Entry point; exits with the command's exit code (a node runs until it is stopped).
   *
   * @param args the command line
   */
  public static void main(String[] args) {
    // The programs' logging: INFO from Eyrie, warnings from Ratis without its expected noise;
    // --log-level and --log-format change it before the first logger exists.
    LogOptions.Parsed log;
    try {
      log = LogOptions.parse(args);
    } catch (Args.UsageException e) {
      System.err.println("eyrie: " + e.getMessage());
      System.exit(2);
      return;
    }
    LogOptions.apply(log);
    io.eyrie.multicast.Node.prepareJvm();
    System.exit(run(log.rest().toArray(new String[0]), System.out, System.err));
  }

  /**
   * Runs a command line without exiting the JVM (for tests and embedding).
   *
   * @param args the command line
   * @param out where results go
   * @param err where problems go
   * @return the exit code
   */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    return commandLine().run(args, out, err);
  }
}
