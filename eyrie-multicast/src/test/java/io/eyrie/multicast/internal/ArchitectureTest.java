package io.eyrie.multicast.internal;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The arrows between eyrie-multicast's internal packages, as their package-info files state
 * them, checked on the compiled main classes: {@code replication} may use {@code transport},
 * {@code state} and the shared {@code internal}; {@code transport} and {@code state} may use
 * {@code internal} only; {@code internal} uses none of them; no cycle. Inside {@code state}, only
 * the classes that join or read the whole state use {@link
 * io.eyrie.multicast.internal.state.GroupState}: the parts that own its fields and the vocabulary
 * they share do not point back at it. That no other module names
 * {@code io.eyrie.multicast.internal..} is checked across modules by bench's {@code
 * InternalPackagesTest} and {@code InternalArchitectureTest}.
 */
@Timeout(60)
class ArchitectureTest {
  private static final String INTERNAL = "io.eyrie.multicast.internal";
  private static final JavaClasses MAIN = new ClassFileImporter()
      .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
      .importPackages("io.eyrie.multicast");

  @Test
  void theInternalPackagesFormNoCycle() {
    slices().matching(INTERNAL + ".(*)..").should().beFreeOfCycles().check(MAIN);
  }

  @Test
  void eachInternalPackageUsesOnlyThePackagesItsPackageInfoAllows() {
    layeredArchitecture().consideringOnlyDependenciesInLayers()
        .layer("shared").definedBy(INTERNAL)
        .layer("state").definedBy(INTERNAL + ".state..")
        .layer("transport").definedBy(INTERNAL + ".transport..")
        .layer("replication").definedBy(INTERNAL + ".replication..")
        .whereLayer("replication").mayNotBeAccessedByAnyLayer()
        .whereLayer("transport").mayOnlyBeAccessedByLayers("replication")
        .whereLayer("state").mayOnlyBeAccessedByLayers("replication")
        .whereLayer("shared").mayOnlyBeAccessedByLayers("state", "transport", "replication")
        .check(MAIN);
  }

  @Test
  void theStatePartsDoNotPointBackAtGroupState() {
    // The rules that join the parts (Admission, ChannelItems, Decisions, GroupChanges) work on the whole
    // state, and the snapshot and the describer read it; every other class must not need it.
    String state = INTERNAL.replace(".", "\\.") + "\\.state\\.";
    noClasses().that().resideInAPackage(INTERNAL + ".state")
        .and().haveNameNotMatching(state
            + "(GroupState|GroupStateSnapshot|GroupStateDescriber|Admission|ChannelItems|Decisions|GroupChanges)(\\$.*)?")
        .should().dependOnClassesThat().haveNameMatching(state + "GroupState(\\$.*)?")
        .check(MAIN);
  }

  @Test
  void everyInternalPackageSaysWhatItOwnsAndThatItIsInternal() throws IOException {
    Set<String> packages = new TreeSet<>();
    MAIN.forEach(c -> {
      if (c.getPackageName().startsWith(INTERNAL)) {
        packages.add(c.getPackageName());
      }
    });
    assertTrue(packages.size() >= 4, "the import sees the internal packages: " + packages);
    for (String p : packages) {
      Path info = Path.of("src/main/java", p.replace('.', '/'), "package-info.java");
      assertTrue(Files.exists(info), "missing " + info);
      String text = Files.readString(info);
      assertTrue(text.contains("Internal use only") && text.toLowerCase().contains("may use"),
          info + " says what it may use and that it is internal");
    }
  }
}
