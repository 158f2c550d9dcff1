package io.eyrie.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.core.spi.FilterReply;
import java.io.IOException;
import java.net.ConnectException;
import org.apache.ratis.protocol.exceptions.LeaderSteppingDownException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.exceptions.TimeoutIOException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Expected Ratis events are dropped at any level; real faults and other loggers pass. */
@Timeout(30)
class ExpectedRatisEventsTest {
  private final LoggerContext context = new LoggerContext();
  private final ExpectedRatisEvents filter = new ExpectedRatisEvents();

  private FilterReply decide(String logger, Level level, String message, Throwable t) {
    Logger l = context.getLogger(logger);
    return filter.decide(new LoggingEvent(Logger.class.getName(), l, level, message, t, null));
  }

  @Test
  void expectedEventsAreDropped() {
    String ratis = "org.apache.ratis.client.impl.OrderedAsync";
    assertEquals(FilterReply.DENY, decide(ratis, Level.ERROR, "failed",
        new IOException("wrapped", new NotLeaderException(null, null, null))));
    assertEquals(FilterReply.DENY, decide(ratis, Level.WARN, "send", new ConnectException("Connection refused")));
    assertEquals(FilterReply.DENY, decide(ratis, Level.ERROR, "request timed out", new TimeoutIOException("3s")));
    assertEquals(FilterReply.DENY, decide(ratis, Level.WARN, "Stack trace", new Throwable("TRACE")));
    assertEquals(FilterReply.DENY, decide(ratis, Level.ERROR, "Failed to send request",
        new java.util.concurrent.CompletionException(new LeaderSteppingDownException("n1@group-1 is stepping down"))));
    assertEquals(FilterReply.DENY, decide(ratis, Level.ERROR, "Failed*",
        new java.util.concurrent.CompletionException(new java.nio.channels.ClosedChannelException())));
  }

  @Test
  void realFaultsAndOtherLoggersPass() {
    assertEquals(FilterReply.NEUTRAL, decide("org.apache.ratis.server.impl.RaftServerImpl", Level.ERROR,
        "failed to apply", new IllegalStateException("corrupt log")));
    assertEquals(FilterReply.NEUTRAL, decide("io.eyrie.core.Client", Level.WARN, "NotLeaderException", null));
  }
}
