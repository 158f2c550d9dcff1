package io.eyrie.multicast.testing;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.AppenderBase;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.regex.Pattern;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.LoggerFactory;

/**
 * Fails a test when Eyrie logs an ERROR it did not expect. Registered for every test class of a
 * module that has this test jar (JUnit's extension autodetection, switched on in the root pom),
 * so a cluster test that passes its assertions while a node logged "dropping invalid proposal"
 * or "applying failed" on the way no longer passes. Only loggers under {@code io.eyrie} count.
 *
 * <p>An ERROR belongs to the test running when it was logged; one logged during a class's
 * set-up is reported by its first test, one logged during tear-down by the class. A test that
 * provokes errors on purpose names them with {@link ExpectedErrors}. Works with logback, the
 * tests' logging backend; with another backend it watches nothing.
 */
public final class LogWatcher implements BeforeAllCallback, BeforeEachCallback, AfterEachCallback, AfterAllCallback {
  private static final String APPENDER = "eyrie-log-watcher";
  private static final ConcurrentLinkedQueue<String> LOGGED = new ConcurrentLinkedQueue<>();

  @Override
  public void beforeAll(ExtensionContext ctx) {
    install();
    LOGGED.clear(); // what a previous class's threads logged after it ended is not this class's
  }

  @Override
  public void beforeEach(ExtensionContext ctx) {
    install(); // a test may have reset the logging configuration
    check(ctx, "during the class's set-up");
  }

  @Override
  public void afterEach(ExtensionContext ctx) {
    check(ctx, "during the test");
  }

  @Override
  public void afterAll(ExtensionContext ctx) {
    check(ctx, "during the class's tear-down or after its last test");
  }

  /** Throws if an ERROR logged since the last check is not expected where {@code ctx} is. */
  private static void check(ExtensionContext ctx, String when) {
    List<String> logged = new ArrayList<>();
    for (String s = LOGGED.poll(); s != null; s = LOGGED.poll()) {
      logged.add(s);
    }
    List<String> unexpected = unexpected(logged, expected(ctx));
    if (!unexpected.isEmpty()) {
      throw new AssertionError("Eyrie logged " + unexpected.size() + " unexpected ERROR(s) " + when
          + " (name the expected ones with @ExpectedErrors):\n  " + String.join("\n  ", unexpected));
    }
  }

  /** The logged lines that no expression is found in. */
  static List<String> unexpected(List<String> logged, List<Pattern> expected) {
    List<String> out = new ArrayList<>();
    for (String line : logged) {
      if (expected.stream().noneMatch(p -> p.matcher(line).find())) {
        out.add(line);
      }
    }
    return out;
  }

  private static List<Pattern> expected(ExtensionContext ctx) {
    List<Pattern> out = new ArrayList<>();
    Optional<ExtensionContext> c = Optional.of(ctx);
    while (c.isPresent()) {
      c.get().getElement().map(e -> e.getAnnotation(ExpectedErrors.class)).ifPresent(a -> {
        for (String s : a.value()) {
          out.add(Pattern.compile(s));
        }
      });
      c = c.get().getParent();
    }
    return out;
  }

  private static void install() {
    try {
      Class.forName("ch.qos.logback.classic.LoggerContext", false, LogWatcher.class.getClassLoader());
    } catch (ClassNotFoundException e) {
      return;
    }
    Logback.install();
  }

  /** Kept apart so that a module without logback never loads it. */
  private static final class Logback {
    static synchronized void install() {
      if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext lc)) {
        return;
      }
      Logger root = lc.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
      if (root.getAppender(APPENDER) != null) {
        return;
      }
      AppenderBase<ILoggingEvent> a = new AppenderBase<>() {
        @Override
        protected void append(ILoggingEvent e) {
          if (e.getLevel().isGreaterOrEqual(Level.ERROR) && e.getLoggerName().startsWith("io.eyrie")) {
            IThrowableProxy t = e.getThrowableProxy();
            LOGGED.add(e.getLoggerName() + " [" + e.getThreadName() + "] " + e.getFormattedMessage()
                + (t == null ? "" : " | " + t.getClassName() + ": " + t.getMessage()));
          }
        }
      };
      a.setName(APPENDER);
      a.setContext(lc);
      a.start();
      root.addAppender(a);
    }
  }
}
