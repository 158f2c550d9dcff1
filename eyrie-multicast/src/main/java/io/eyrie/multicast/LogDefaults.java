package io.eyrie.multicast;

import org.slf4j.ILoggerFactory;
import org.slf4j.LoggerFactory;

/**
 * Sensible log levels when the application configured none. Logback without a configuration
 * file logs everything at DEBUG, and Ratis and Netty then print thousands of lines for one
 * start-up. When logback is the binding and no configuration exists (no {@code logback.xml} or
 * {@code logback-test.xml} on the class path, no {@code logback.configurationFile} property),
 * Ratis's loggers are turned off (its retries, elections and shutdowns are expected events in
 * Eyrie, logged with stack traces; Eyrie reports what matters of them itself), Netty's are set to
 * WARN and Eyrie's to INFO. Any configuration the application provides is left alone: configure
 * logback to see Ratis's logs. Logback is reached by reflection: it is not a dependency
 * of the library.
 */
final class LogDefaults {
  private static volatile boolean applied;

  private LogDefaults() {}

  static void apply() {
    if (applied) {
      return;
    }
    applied = true;
    try {
      ILoggerFactory f = LoggerFactory.getILoggerFactory();
      if (!f.getClass().getName().equals("ch.qos.logback.classic.LoggerContext") || configured()) {
        return;
      }
      Class<?> level = Class.forName("ch.qos.logback.classic.Level", true, f.getClass().getClassLoader());
      set(f.getLogger("org.apache.ratis"), level, "OFF");
      set(f.getLogger("io.netty"), level, "WARN");
      set(f.getLogger("io.eyrie"), level, "INFO");
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      // Defaults only: if logback is not what it looks like, its own behaviour stands.
    }
  }

  private static boolean configured() {
    ClassLoader cl = LogDefaults.class.getClassLoader();
    return System.getProperty("logback.configurationFile") != null
        || cl.getResource("logback-test.xml") != null
        || cl.getResource("logback.xml") != null;
  }

  private static void set(Object logger, Class<?> level, String name) throws ReflectiveOperationException {
    if (logger.getClass().getMethod("getLevel").invoke(logger) == null) {
      logger.getClass().getMethod("setLevel", level).invoke(logger, level.getMethod("toLevel", String.class).invoke(null, name));
    }
  }
}
