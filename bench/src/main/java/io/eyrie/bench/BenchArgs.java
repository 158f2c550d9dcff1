package io.eyrie.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The {@code --name value} options that {@link BenchMain} hands to a benchmark's entry point
 * (already checked there against the benchmark's usage), with the benchmark's defaults given at
 * each read. One parser for every benchmark that takes such a command line.
 */
final class BenchArgs {
  private final Map<String, String> values;

  private BenchArgs(Map<String, String> values) {
    this.values = values;
  }

  /** Parses {@code --name value} pairs. */
  static BenchArgs parse(String[] args) {
    return parse(args, Set.of());
  }

  /** Parses {@code --name value} pairs and the given switches, which take no value (read as {@code "true"}). */
  static BenchArgs parse(String[] args, Set<String> switches) {
    Map<String, String> m = new HashMap<>();
    for (int i = 0; i < args.length; i++) {
      if (!args[i].startsWith("--")) {
        throw new IllegalArgumentException("expected --option, got " + args[i]);
      }
      String k = args[i].substring(2);
      if (switches.contains(k)) {
        m.put(k, "true");
      } else if (i + 1 < args.length) {
        m.put(k, args[++i]);
      } else {
        throw new IllegalArgumentException("option --" + k + " needs a value");
      }
    }
    return new BenchArgs(m);
  }

  /** Whether the option was given. */
  boolean has(String name) {
    return values.containsKey(name);
  }

  String string(String name, String dflt) {
    return values.getOrDefault(name, dflt);
  }

  int integer(String name, int dflt) {
    return has(name) ? Integer.parseInt(values.get(name)) : dflt;
  }

  long longValue(String name, long dflt) {
    return has(name) ? Long.parseLong(values.get(name)) : dflt;
  }

  double decimal(String name, double dflt) {
    return has(name) ? Double.parseDouble(values.get(name)) : dflt;
  }

  boolean bool(String name, boolean dflt) {
    return has(name) ? Boolean.parseBoolean(values.get(name)) : dflt;
  }

  Path path(String name, String dflt) {
    return Path.of(string(name, dflt));
  }

  /** A comma-separated list, each element trimmed. */
  List<String> list(String name, String dflt) {
    List<String> out = new ArrayList<>();
    for (String s : string(name, dflt).split(",")) {
      out.add(s.trim());
    }
    return out;
  }
}
