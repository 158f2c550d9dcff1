package io.eyrie.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * "internal" means internal: no module's main code (Java or Clojure) names another module's
 * {@code io.eyrie.X.internal} package, and each such package says so in its package-info. It
 * scans the sources of every module of the checkout (bench sits beside them all).
 */
@Timeout(30)
class InternalPackagesTest {
  private static final Path ROOT = Path.of("").toAbsolutePath().getParent();

  /** Internal package name to the module that owns it. */
  private static Map<String, String> owners() throws IOException {
    Map<String, String> owners = new TreeMap<>();
    try (Stream<Path> dirs = Files.walk(ROOT, 8)) {
      for (Path d : dirs.filter(Files::isDirectory).filter(p -> p.getFileName().toString().equals("internal")).toList()) {
        Path rel = ROOT.relativize(d);
        if (rel.getNameCount() > 4 && rel.subpath(1, 4).toString().equals(Path.of("src", "main", "java").toString())) {
          owners.put(rel.subpath(4, rel.getNameCount()).toString().replace('/', '.'), rel.getName(0).toString());
        }
      }
    }
    return owners;
  }

  @Test
  void noModuleUsesAnotherModulesInternalPackage() throws IOException {
    Map<String, String> owners = owners();
    assertTrue(owners.containsKey("io.eyrie.multicast.internal") && owners.containsKey("io.eyrie.core.internal"),
        "the scan finds the internal packages: " + owners);
    List<String> offenders = new ArrayList<>();
    try (Stream<Path> files = Files.walk(ROOT)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java") || p.toString().endsWith(".clj")).toList()) {
        Path rel = ROOT.relativize(f);
        if (rel.getNameCount() < 4 || !rel.getName(1).toString().equals("src") || !rel.getName(2).toString().equals("main")) {
          continue;
        }
        String module = rel.getName(0).toString();
        String text = Files.readString(f);
        owners.forEach((pkg, owner) -> {
          if (!owner.equals(module) && text.contains(pkg)) {
            offenders.add(rel + " uses " + pkg + " (of " + owner + ")");
          }
        });
      }
    }
    assertEquals(List.of(), offenders);
  }

  @Test
  void everyInternalPackageSaysSo() throws IOException {
    for (Map.Entry<String, String> e : owners().entrySet()) {
      Path info = ROOT.resolve(e.getValue()).resolve("src/main/java").resolve(e.getKey().replace('.', '/'))
          .resolve("package-info.java");
      assertTrue(Files.exists(info), "missing " + info);
      assertTrue(Files.readString(info).contains("Internal use only"), info + " says it is internal");
    }
  }

  @Test
  void theScanSeesAnOffence() throws IOException {
    // Guard against a scan that silently matches nothing: bench's own sources import eyrie-core.
    try (Stream<Path> files = Files.walk(ROOT.resolve("bench/src/main/java"))) {
      assertFalse(files.filter(p -> p.toString().endsWith(".java")).toList().isEmpty());
    }
  }
}
