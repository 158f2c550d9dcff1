package io.eyrie.examples;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The README's "Write a service" section quotes compiled code: every Java block in it appears,
 * line for line (indentation aside), in the example's sources or in {@code WriteAServiceTest},
 * which runs it. A block edited in the README alone, or code changed without the README, fails.
 */
@Timeout(30)
class ReadmeSnippetsTest {
  private static final Path MODULE = Path.of("").toAbsolutePath();

  static List<List<String>> blocks() throws IOException {
    String readme = Files.readString(MODULE.getParent().resolve("README.md"));
    int from = readme.indexOf("\n## Write a service\n");
    assertTrue(from >= 0, "the README has a 'Write a service' section");
    int to = readme.indexOf("\n## ", from + 1);
    String section = readme.substring(from, to < 0 ? readme.length() : to);
    List<List<String>> blocks = new ArrayList<>();
    List<String> cur = null;
    for (String line : section.split("\n")) {
      if (cur == null && line.equals("```java")) {
        cur = new ArrayList<>();
      } else if (cur != null && line.equals("```")) {
        blocks.add(cur);
        cur = null;
      } else if (cur != null) {
        cur.add(line.strip());
      }
    }
    return blocks;
  }

  static List<List<String>> sources() throws IOException {
    List<List<String>> out = new ArrayList<>();
    try (Stream<Path> files = Files.walk(MODULE.resolve("src"))) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
        out.add(Files.readAllLines(f).stream().map(String::strip).toList());
      }
    }
    return out;
  }

  @Test
  void everyJavaBlockIsCompiledSource() throws IOException {
    List<List<String>> blocks = blocks();
    assertTrue(blocks.size() >= 5, "objects, operations, server, oracle, service and client: " + blocks.size());
    List<List<String>> sources = sources();
    for (List<String> b : blocks) {
      assertFalse(b.isEmpty());
      boolean found = sources.stream().anyMatch(s -> java.util.Collections.indexOfSubList(s, b) >= 0);
      assertTrue(found, "not in the compiled sources of eyrie-examples:\n" + String.join("\n", b));
    }
  }
}
