package io.eyrie.tools;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * The dispatch every Eyrie program shares: {@code PROGRAM COMMAND [OPTIONS]}, {@code --help}
 * (overview or a command's usage, exit 0), {@code --version} (from the jar manifest, exit 0),
 * and a one-line error with exit 2 for an unknown command or option, before any work starts.
 * Exit codes: 0 success, 1 the command failed, 2 the command line is wrong.
 */
public final class CommandLine {
  private final String program;
  private final Map<String, Command> commands = new LinkedHashMap<>();

  /**
   * Creates a dispatcher.
   *
   * @param program the program's name, as the user types it
   * @param commands its subcommands, in the overview's order
   */
  public CommandLine(String program, List<? extends Command> commands) {
    this.program = program;
    for (Command c : commands) {
      this.commands.put(c.name(), c);
    }
  }

  /**
   * Returns Eyrie's version as the jar manifest states it ({@code Implementation-Version}), or
   * "development" when run from classes rather than a built jar.
   *
   * @param from a class of the program
   * @return the version
   */
  public static String version(Class<?> from) {
    String v = from.getPackage() == null ? null : from.getPackage().getImplementationVersion();
    return v == null ? "development" : v;
  }

  /**
   * Runs a command line without exiting the JVM.
   *
   * @param args the command line
   * @param out where results go
   * @param err where problems go
   * @return the exit code
   */
  public int run(String[] args, PrintStream out, PrintStream err) {
    if (args.length == 0) {
      overview(err);
      return 2;
    }
    if (args[0].equals("--help") || args[0].equals("-h") || args[0].equals("help")) {
      overview(out);
      return 0;
    }
    if (args[0].equals("--version") || args[0].equals("version")) {
      out.println(program + " " + version(CommandLine.class));
      return 0;
    }
    Command cmd = commands.get(args[0]);
    if (cmd == null) {
      err.println(program + ": unknown command '" + args[0] + "' (" + program + " --help lists the commands)");
      return 2;
    }
    return run(program, program + " " + cmd.name(), cmd, Arrays.asList(args).subList(1, args.length), out, err);
  }

  /**
   * Runs a program that is one command (the Jepsen harness's node process), without exiting the
   * JVM: the same {@code --help}, {@code --version}, messages and exit codes as a subcommand.
   *
   * @param program the program's name, as messages show it
   * @param cmd the command
   * @param args the command line
   * @param out where results go
   * @param err where problems go
   * @return the exit code
   */
  public static int run(String program, Command cmd, List<String> args, PrintStream out, PrintStream err) {
    return run(program, program, cmd, args, out, err);
  }

  private static int run(String program, String name, Command cmd, List<String> rest, PrintStream out,
      PrintStream err) {
    try {
      if (rest.contains("--version") && !cmd.valued().contains("version") && !cmd.switches().contains("version")) {
        out.println(program + " " + version(CommandLine.class));
        return 0;
      }
      Args a = Args.parse(rest, cmd.valued(), cmd.switches());
      if (a.help()) {
        out.println(cmd.usage());
        return 0;
      }
      return cmd.run(a, out, err);
    } catch (Args.UsageException e) {
      err.println(name + ": " + e.getMessage() + " (" + name + " --help shows the usage)");
      return 2;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      err.println(name + ": interrupted");
      return 1;
    } catch (Exception e) {
      err.println(name + ": failed: " + unwrap(e));
      return 1;
    }
  }

  /** Returns the cause that says what went wrong, through wrapping exceptions. */
  public static Throwable unwrap(Throwable t) {
    while ((t instanceof ExecutionException || t instanceof CompletionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  private void overview(PrintStream out) {
    out.println("usage: " + program + " COMMAND [OPTIONS]   (" + program + " COMMAND --help for its options)");
    out.println();
    for (Command c : commands.values()) {
      out.printf("  %-9s %s%n", c.name(), c.summary());
    }
    out.println();
    out.println("  --version  prints the version");
  }
}
