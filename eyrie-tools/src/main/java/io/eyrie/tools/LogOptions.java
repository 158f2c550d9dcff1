package io.eyrie.tools;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * bin/eyrie's logging options, taken from any command's line before the command sees it:
 * {@code --log-level LEVEL} (Eyrie's own loggers: TRACE, DEBUG, INFO, WARN or ERROR) and {@code
 * --log-format text|json} (JSON lines through logback's JsonEncoder). They become system
 * properties the logback configuration reads, so an operator changes them without replacing the
 * JVM flags (heap, collector) that {@code JAVA_OPTS} would replace.
 */
final class LogOptions {
  static final String LEVEL_PROPERTY = "eyrie.log.level";
  static final String CONFIG_PROPERTY = "logback.configurationFile";
  static final String TEXT_CONFIG = "eyrie-logback.xml";
  static final String JSON_CONFIG = "eyrie-logback-json.xml";
  private static final Set<String> LEVELS = Set.of("TRACE", "DEBUG", "INFO", "WARN", "ERROR");

  /** The options found and the command line without them. */
  record Parsed(String level, String format, List<String> rest) {}

  private LogOptions() {}

  /** Splits the logging options off a command line; a bad value is a usage error. */
  static Parsed parse(String[] args) throws Args.UsageException {
    String level = null;
    String format = "text";
    List<String> rest = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.equals("--log-level") || a.equals("--log-format")) {
        if (i + 1 >= args.length) {
          throw new Args.UsageException(a + " needs a value");
        }
        String v = args[++i];
        if (a.equals("--log-level")) {
          level = v.toUpperCase(Locale.ROOT);
          if (!LEVELS.contains(level)) {
            throw new Args.UsageException("--log-level: '" + v + "' is not one of trace, debug, info, warn, error");
          }
        } else if (v.equals("text") || v.equals("json")) {
          format = v;
        } else {
          throw new Args.UsageException("--log-format: '" + v + "' is not text or json");
        }
      } else {
        rest.add(a);
      }
    }
    return new Parsed(level, format, rest);
  }

  /** Sets the properties logback reads (unless an operator named a configuration file). */
  static void apply(Parsed p) {
    if (System.getProperty(CONFIG_PROPERTY) == null) {
      System.setProperty(CONFIG_PROPERTY, p.format().equals("json") ? JSON_CONFIG : TEXT_CONFIG);
    }
    if (p.level() != null) {
      System.setProperty(LEVEL_PROPERTY, p.level());
    }
  }
}
