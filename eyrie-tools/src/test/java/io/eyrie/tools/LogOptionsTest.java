package io.eyrie.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** bin/eyrie's {@code --log-level} and {@code --log-format}, and the two logback files they pick. */
@Timeout(30)
class LogOptionsTest {
  @Test
  void theOptionsAreTakenFromAnywhereOnTheLineAndTheRestIsKept() throws Exception {
    LogOptions.Parsed p = LogOptions.parse(new String[] {"node", "--log-level", "debug", "--cluster", "c.conf",
        "--log-format", "json", "--id", "1"});
    assertEquals("DEBUG", p.level());
    assertEquals("json", p.format());
    assertEquals(List.of("node", "--cluster", "c.conf", "--id", "1"), p.rest());
    LogOptions.Parsed none = LogOptions.parse(new String[] {"status", "--cluster", "c.conf"});
    assertNull(none.level());
    assertEquals("text", none.format());
  }

  @Test
  void badValuesAreUsageErrors() {
    assertTrue(assertThrows(Args.UsageException.class, () -> LogOptions.parse(new String[] {"--log-level", "loud"}))
        .getMessage().contains("'loud'"));
    assertTrue(assertThrows(Args.UsageException.class, () -> LogOptions.parse(new String[] {"--log-format", "xml"}))
        .getMessage().contains("'xml'"));
    assertThrows(Args.UsageException.class, () -> LogOptions.parse(new String[] {"status", "--log-level"}));
  }

  /** Loads a configuration file into a fresh logback context with Eyrie's level set. */
  private static LoggerContext load(String file, String level) throws Exception {
    LoggerContext ctx = new LoggerContext();
    ctx.setMDCAdapter(new ch.qos.logback.classic.util.LogbackMDCAdapter());
    ctx.putProperty(LogOptions.LEVEL_PROPERTY, level);
    JoranConfigurator j = new JoranConfigurator();
    j.setContext(ctx);
    j.doConfigure(LogOptionsTest.class.getClassLoader().getResource(file));
    return ctx;
  }

  @Test
  void jsonFormatWritesOneJsonObjectPerEventAndTheLevelReachesEyriesLoggers() throws Exception {
    LoggerContext ctx = load(LogOptions.JSON_CONFIG, "DEBUG");
    assertEquals(Level.DEBUG, ctx.getLogger("io.eyrie").getLevel());
    @SuppressWarnings("unchecked")
    ConsoleAppender<ILoggingEvent> out = (ConsoleAppender<ILoggingEvent>) ctx.getLogger("ROOT").getAppender("STDERR");
    Encoder<ILoggingEvent> enc = out.getEncoder();
    LoggingEvent e = new LoggingEvent("x", ctx.getLogger("io.eyrie.Test"), Level.INFO, "group {} led", null,
        new Object[] {"p0"});
    String line = new String(enc.encode(e), StandardCharsets.UTF_8).trim();
    assertTrue(line.startsWith("{") && line.endsWith("}"), line);
    assertTrue(line.contains("\"level\":\"INFO\"") && line.contains("group {} led") && line.contains("p0"), line);
    assertEquals(Level.INFO, load(LogOptions.TEXT_CONFIG, "INFO").getLogger("io.eyrie").getLevel());
  }
}
