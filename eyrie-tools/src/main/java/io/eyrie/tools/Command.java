package io.eyrie.tools;

import java.io.PrintStream;
import java.util.Set;

/** One subcommand of an Eyrie program ({@code eyrie status}, {@code chirper node}, ...). */
public interface Command {

  /** Returns the name typed after the program's name. */
  String name();

  /** Returns a one-line description for the overview. */
  String summary();

  /** Returns the full usage text printed by {@code --help}. */
  String usage();

  /** Returns the options that take a value. */
  Set<String> valued();

  /** Returns the options that take no value. */
  default Set<String> switches() {
    return Set.of();
  }

  /**
   * Runs the subcommand. Called only after the whole command line parsed, so a wrong option
   * never starts any work.
   *
   * @param args the parsed arguments
   * @param out where results go
   * @param err where problems go
   * @return the exit code
   * @throws Args.UsageException if the arguments cannot be run
   * @throws Exception if the command fails
   */
  int run(Args args, PrintStream out, PrintStream err) throws Exception;
}
