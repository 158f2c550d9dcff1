package io.eyrie.tools;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The command line of one subcommand: {@code --name value} (or {@code --name=value}) options,
 * boolean {@code --name} switches and positional arguments. Every option must be known to the
 * subcommand, so a typo fails loudly instead of being ignored.
 *
 * <p>The same option means the same thing in every Eyrie program: a duration is {@code 30},
 * {@code 30s}, {@code 500ms} or {@code 2m}; {@code --storage} is another name for
 * {@code --data} (a node's directory).
 */
public final class Args {

  /** A command line that cannot be run; the message says what is wrong. */
  public static final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what is wrong, one line
     */
    public UsageException(String message) {
      super(message);
    }
  }

  /** Other names of options, to the name commands declare. */
  private static final Map<String, String> ALIASES = Map.of("storage", "data");

  private final Map<String, String> options = new HashMap<>();
  private final List<String> positional = new ArrayList<>();
  private boolean help;

  private Args() {}

  /**
   * Parses a subcommand's arguments.
   *
   * @param argv the arguments after the subcommand's name
   * @param valued the options that take a value
   * @param switches the options that take none
   * @return the parsed arguments
   * @throws UsageException for an unknown option or a missing value
   */
  public static Args parse(List<String> argv, Set<String> valued, Set<String> switches) throws UsageException {
    Args a = new Args();
    for (int i = 0; i < argv.size(); i++) {
      String s = argv.get(i);
      if (s.equals("--help") || s.equals("-h")) {
        a.help = true;
      } else if (s.equals("--")) {
        a.positional.addAll(argv.subList(i + 1, argv.size()));
        break;
      } else if (s.startsWith("--")) {
        String name = s.substring(2);
        String value = null;
        int eq = name.indexOf('=');
        if (eq >= 0) {
          value = name.substring(eq + 1);
          name = name.substring(0, eq);
        }
        name = ALIASES.getOrDefault(name, name);
        if (switches.contains(name)) {
          if (value != null) {
            throw new UsageException("option --" + name + " takes no value");
          }
          a.options.put(name, "true");
        } else if (valued.contains(name)) {
          if (value == null) {
            if (i + 1 >= argv.size()) {
              throw new UsageException("option --" + name + " needs a value");
            }
            value = argv.get(++i);
          }
          a.options.put(name, value);
        } else {
          throw new UsageException("unknown option --" + name);
        }
      } else {
        a.positional.add(s);
      }
    }
    return a;
  }

  /** Returns true if {@code --help} or {@code -h} was given. */
  public boolean help() {
    return help;
  }

  /** Returns the arguments that are not options, in order. */
  public List<String> positional() {
    return positional;
  }

  /**
   * Refuses positional arguments, for a command that takes none.
   *
   * @throws UsageException naming the first one given
   */
  public void noPositional() throws UsageException {
    if (!positional.isEmpty()) {
      throw new UsageException("unexpected argument '" + positional.get(0) + "'");
    }
  }

  /** Returns true if the option was given. */
  public boolean has(String name) {
    return options.containsKey(name);
  }

  /** Returns true if the switch was given. */
  public boolean flag(String name) {
    return options.containsKey(name);
  }

  /** Returns an option's value, or {@code def} if absent. */
  public String string(String name, String def) {
    return options.getOrDefault(name, def);
  }

  /** Returns an option's value; fails if absent. */
  public String required(String name) throws UsageException {
    String v = options.get(name);
    if (v == null) {
      throw new UsageException("option --" + name + " is required");
    }
    return v;
  }

  /** Returns an integer option within [min, max], or {@code def} if absent. */
  public int integer(String name, int def, int min, int max) throws UsageException {
    String v = options.get(name);
    if (v == null) {
      return def;
    }
    return checkRange(name, parseLong(name, v), min, max);
  }

  /** Returns a long option, or {@code def} if absent. */
  public long longValue(String name, long def) throws UsageException {
    String v = options.get(name);
    return v == null ? def : parseLong(name, v);
  }

  /** Reads a duration: {@code 30} or {@code 30s} (seconds), {@code 500ms}, {@code 2m}. */
  public Duration duration(String name, Duration def, Duration min) throws UsageException {
    String v = options.get(name);
    if (v == null) {
      return def;
    }
    Duration d;
    String t = v.trim().toLowerCase(Locale.ROOT);
    if (t.endsWith("ms")) {
      d = Duration.ofMillis(parseLong(name, t.substring(0, t.length() - 2)));
    } else if (t.endsWith("s")) {
      d = Duration.ofSeconds(parseLong(name, t.substring(0, t.length() - 1)));
    } else if (t.endsWith("m")) {
      d = Duration.ofMinutes(parseLong(name, t.substring(0, t.length() - 1)));
    } else {
      d = Duration.ofSeconds(parseLong(name, t));
    }
    if (d.compareTo(min) < 0) {
      throw new UsageException("option --" + name + " must be at least " + min.toMillis() + " ms, got " + v);
    }
    return d;
  }

  /**
   * Reads an option whose value is one of a fixed set (compared without case).
   *
   * @param name the option
   * @param def the value when absent
   * @param allowed the values it may take
   * @return the value, lower case
   * @throws UsageException if the value is not allowed
   */
  public String choice(String name, String def, String... allowed) throws UsageException {
    String v = options.get(name);
    if (v == null) {
      return def;
    }
    String t = v.toLowerCase(Locale.ROOT);
    for (String a : allowed) {
      if (a.equals(t)) {
        return t;
      }
    }
    throw new UsageException("option --" + name + " must be one of " + String.join(", ", allowed) + ", got " + v);
  }

  private static long parseLong(String name, String v) throws UsageException {
    try {
      return Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      throw new UsageException("option --" + name + " expects a number, got '" + v + "'");
    }
  }

  private static int checkRange(String name, long v, int min, int max) throws UsageException {
    if (v < min || v > max) {
      throw new UsageException("option --" + name + " must be between " + min + " and " + max + ", got " + v);
    }
    return (int) v;
  }
}
