package io.eyrie.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * "internal" means internal: no module's code, main or test (Java or Clojure), names another
 * module's {@code io.eyrie.X.internal} package, and each such package says so in its
 * package-info. A module's tests may use its own internals; the multicast test jar's classes are
 * eyrie-multicast's tests, so they may use its internals, and other modules reach them through
 * that jar's façades (such as {@code io.eyrie.multicast.testing.SimGroup}). It scans the sources
 * of every module of the checkout (bench sits beside them all).
 */
@Timeout(30)
class InternalPackagesTest {
  private static final Path ROOT = Path.of("").toAbsolutePath().getParent();
  /** The guards themselves, which name the internal packages to check them. */
  private static final Set<Path> GUARDS = Set.of(
      Path.of("bench/src/test/java/io/eyrie/bench/InternalPackagesTest.java"),
      Path.of("bench/src/test/java/io/eyrie/bench/InternalArchitectureTest.java"));

  /** Internal package name to the module that owns it, for the modules under {@code root}. */
  static Map<String, String> owners(Path root) throws IOException {
    Map<String, String> owners = new TreeMap<>();
    try (Stream<Path> dirs = Files.walk(root, 8)) {
      for (Path d : dirs.filter(Files::isDirectory).filter(p -> p.getFileName().toString().equals("internal")).toList()) {
        Path rel = root.relativize(d);
        if (rel.getNameCount() > 4 && rel.subpath(1, 4).toString().equals(Path.of("src", "main", "java").toString())) {
          owners.put(rel.subpath(4, rel.getNameCount()).toString().replace('/', '.'), rel.getName(0).toString());
        }
      }
    }
    return owners;
  }

  /**
   * The main and test sources of the modules under {@code root} that name another module's
   * internal package, one line each: the file (relative to {@code root}), the package, its owner.
   */
  static List<String> offences(Path root) throws IOException {
    Map<String, String> owners = owners(root);
    List<String> offences = new ArrayList<>();
    try (Stream<Path> files = Files.walk(root)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java") || p.toString().endsWith(".clj")).toList()) {
        Path rel = root.relativize(f);
        if (rel.getNameCount() < 4 || !rel.getName(1).toString().equals("src")
            || !Set.of("main", "test").contains(rel.getName(2).toString()) || GUARDS.contains(rel)) {
          continue;
        }
        String module = rel.getName(0).toString();
        String text = Files.readString(f);
        owners.forEach((pkg, owner) -> {
          if (!owner.equals(module) && text.contains(pkg)) {
            offences.add(rel + " uses " + pkg + " (of " + owner + ")");
          }
        });
      }
    }
    return offences;
  }

  @Test
  void noModuleUsesAnotherModulesInternalPackage() throws IOException {
    Map<String, String> owners = owners(ROOT);
    assertTrue(owners.containsKey("io.eyrie.multicast.internal") && owners.containsKey("io.eyrie.core.internal"),
        "the scan finds the internal packages: " + owners);
    assertEquals(List.of(), offences(ROOT));
  }

  @Test
  void everyInternalPackageSaysSo() throws IOException {
    for (Map.Entry<String, String> e : owners(ROOT).entrySet()) {
      Path info = ROOT.resolve(e.getValue()).resolve("src/main/java").resolve(e.getKey().replace('.', '/'))
          .resolve("package-info.java");
      assertTrue(Files.exists(info), "missing " + info);
      assertTrue(Files.readString(info).contains("Internal use only"), info + " says it is internal");
    }
  }

  @Test
  void theScanSeesAPlantedOffence(@TempDir Path root) throws IOException {
    // Two modules shaped like the checkout's: "owner" has an internal package, which its own main
    // and test code use; "user" names it once in main code and once in a test.
    String pkg = "io.eyrie.owner.internal";
    plant(root, "owner/src/main/java/io/eyrie/owner/internal/Hidden.java", "package " + pkg + ";");
    plant(root, "owner/src/main/java/io/eyrie/owner/Api.java", "import " + pkg + ".Hidden;");
    plant(root, "owner/src/test/java/io/eyrie/owner/internal/HiddenTest.java", "package " + pkg + ";");
    plant(root, "user/src/main/java/io/eyrie/user/Clean.java", "import io.eyrie.owner.Api;");
    plant(root, "user/src/main/java/io/eyrie/user/Sneaky.java", "import " + pkg + ".Hidden;");
    plant(root, "user/src/test/java/io/eyrie/user/SneakyTest.java", "import " + pkg + ".Hidden;");
    plant(root, "user/target/generated/io/eyrie/user/Built.java", "import " + pkg + ".Hidden;");

    assertEquals(Map.of(pkg, "owner"), owners(root));
    assertEquals(List.of(
        "user/src/main/java/io/eyrie/user/Sneaky.java uses " + pkg + " (of owner)",
        "user/src/test/java/io/eyrie/user/SneakyTest.java uses " + pkg + " (of owner)"),
        offences(root).stream().sorted().toList());
  }

  private static void plant(Path root, String file, String text) throws IOException {
    Path f = root.resolve(file);
    Files.createDirectories(f.getParent());
    Files.writeString(f, text + "\n");
  }
}
