package io.eyrie.multicast.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;
import org.slf4j.LoggerFactory;

/** The watcher catches a planted ERROR, lets an expected one pass and ignores other loggers. */
@Timeout(60)
class LogWatcherTest {

  /** Run by the test kit only (surefire skips nested classes). */
  static class Planted {
    @Test
    void logsAnUnexpectedError() {
      LoggerFactory.getLogger("io.eyrie.multicast.Planted").error("planted offence {}", 42);
    }

    @Test
    @ExpectedErrors("planted offence \\d+")
    void logsAnExpectedError() {
      LoggerFactory.getLogger("io.eyrie.multicast.Planted").error("planted offence {}", 43);
    }

    @Test
    void logsAnErrorOfAnotherLibrary() {
      LoggerFactory.getLogger("org.apache.ratis.Planted").error("not ours");
    }

    @Test
    void logsAWarning() {
      LoggerFactory.getLogger("io.eyrie.multicast.Planted").warn("only a warning");
    }
  }

  private static Events run(Class<?> c) {
    return EngineTestKit.engine("junit-jupiter").configurationParameter("junit.jupiter.extensions.autodetection.enabled",
        "true").selectors(selectClass(c)).execute().testEvents();
  }

  @Test
  void aPlantedErrorFailsItsTestAndNoOther() {
    Events e = run(Planted.class);
    e.assertStatistics(s -> s.started(4).succeeded(3).failed(1));
    String failed = e.failed().list().get(0).getTestDescriptor().getDisplayName();
    assertEquals("logsAnUnexpectedError()", failed);
    String why = e.failed().list().get(0).getPayload(org.junit.platform.engine.TestExecutionResult.class)
        .flatMap(org.junit.platform.engine.TestExecutionResult::getThrowable).map(Throwable::getMessage).orElse("");
    assertEquals(true, why.contains("planted offence 42"), why);
  }

  @Test
  void expressionsAreFoundAnywhereInTheLine() {
    List<String> logged = List.of("io.eyrie.X [t] dropping channel batch from unknown group g9", "io.eyrie.X [t] other");
    assertEquals(List.of("io.eyrie.X [t] other"), LogWatcher.unexpected(logged, List.of(Pattern.compile("unknown group"))));
    assertEquals(logged, LogWatcher.unexpected(logged, List.of()));
  }
}
