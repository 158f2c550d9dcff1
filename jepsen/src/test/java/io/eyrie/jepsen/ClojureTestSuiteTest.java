package io.eyrie.jepsen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import clojure.java.api.Clojure;
import clojure.lang.IFn;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Runs the module's Clojure code under JUnit 5, so that {@code ./mvnw verify} compiles and
 * tests it: every namespace under {@code src/main/clojure} is loaded (a compile check), and
 * every clojure.test var of every {@code *_test.clj} namespace under
 * {@code src/test/clojure} becomes one JUnit test that fails when the var reports a failure
 * or an error.
 */
class ClojureTestSuiteTest {

  private static final String RUNNER = "eyrie.jepsen.test-runner";

  private static IFn runnerFn(String name) {
    Clojure.var("clojure.core", "require").invoke(Clojure.read(RUNNER));
    return Clojure.var(RUNNER, name);
  }

  private static String dir(String property) {
    String dir = System.getProperty(property);
    if (dir == null) {
      throw new IllegalStateException("system property " + property + " is not set (see jepsen/pom.xml)");
    }
    return dir;
  }

  @TestFactory
  List<DynamicNode> clojure() {
    IFn namespacesIn = runnerFn("namespaces-in");
    IFn loadNs = runnerFn("load-ns!");
    IFn testVarNames = runnerFn("test-var-names");
    IFn runTestVar = runnerFn("run-test-var");
    List<DynamicNode> nodes = new ArrayList<>();

    List<DynamicNode> loads = new ArrayList<>();
    for (Object ns : (List<?>) namespacesIn.invoke(dir("eyrie.clojure.main.dir"), ".clj")) {
      loads.add(DynamicTest.dynamicTest("load " + ns, () -> loadNs.invoke(ns)));
    }
    nodes.add(DynamicContainer.dynamicContainer("compile main namespaces", loads));

    List<?> testNamespaces = (List<?>) namespacesIn.invoke(dir("eyrie.clojure.test.dir"), "_test.clj");
    if (testNamespaces.isEmpty()) {
      nodes.add(DynamicTest.dynamicTest("find test namespaces", () -> fail("no *_test.clj namespaces found")));
    }
    for (Object ns : testNamespaces) {
      List<DynamicNode> tests = new ArrayList<>();
      List<?> vars;
      try {
        loadNs.invoke(ns);
        vars = (List<?>) testVarNames.invoke(ns);
      } catch (RuntimeException | Error e) {
        tests.add(DynamicTest.dynamicTest("load " + ns, () -> { throw e; }));
        nodes.add(DynamicContainer.dynamicContainer(ns.toString(), tests));
        continue;
      }
      if (vars.isEmpty()) {
        tests.add(DynamicTest.dynamicTest("find tests", () -> fail(ns + " defines no tests")));
      }
      for (Object var : vars) {
        tests.add(DynamicTest.dynamicTest(var.toString(), () -> {
          Map<?, ?> r = (Map<?, ?>) runTestVar.invoke(ns, var);
          String output = (String) r.get("output");
          if (!output.isEmpty()) {
            System.out.println("[" + ns + "/" + var + "]\n" + output);
          }
          long failures = ((Number) r.get("fail")).longValue() + ((Number) r.get("error")).longValue();
          assertEquals(0L, failures, () -> ns + "/" + var + " failed:\n" + output);
          if (((Number) r.get("pass")).longValue() == 0L) {
            fail(ns + "/" + var + " made no assertions");
          }
        }));
      }
      nodes.add(DynamicContainer.dynamicContainer(ns.toString(), tests));
    }
    return nodes;
  }
}
