package io.eyrie.tools;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** Owns running a {@code bin/eyrie} command line in the test's JVM and capturing what it printed. */
final class EyrieRuns {
  private EyrieRuns() {}

  /** Runs {@link EyrieMain#run} and returns {exit code, stdout, stderr}. */
  static String[] run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = EyrieMain.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new String[] {Integer.toString(code), out.toString(StandardCharsets.UTF_8),
        err.toString(StandardCharsets.UTF_8)};
  }
}
