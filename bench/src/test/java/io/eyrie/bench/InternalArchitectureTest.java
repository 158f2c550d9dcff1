package io.eyrie.bench;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link InternalPackagesTest}'s rule for eyrie-multicast, on the compiled main classes of every
 * module on bench's class path (all the Java modules): no class outside {@code
 * io.eyrie.multicast..} depends on {@code io.eyrie.multicast.internal..} or its subpackages. The
 * source scan also covers the Clojure harness; this one also sees uses that name no import.
 */
@Timeout(120)
class InternalArchitectureTest {
  @Test
  void noOtherModuleUsesTheMulticastInternals() {
    // The other modules are directories under `mvn test` and jars under `mvn verify`: both count.
    JavaClasses main = new ClassFileImporter()
        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
        .importPackages("io.eyrie");
    Set<String> seen = new TreeSet<>();
    for (JavaClass c : main) {
      seen.add(c.getPackageName().split("\\.")[2]);
    }
    assertTrue(seen.containsAll(Set.of("core", "oracle", "bench", "multicast")),
        "the import sees the modules' classes: " + seen);
    noClasses().that().resideOutsideOfPackage("io.eyrie.multicast..")
        .should().dependOnClassesThat().resideInAPackage("io.eyrie.multicast.internal..")
        .check(main);
  }
}
