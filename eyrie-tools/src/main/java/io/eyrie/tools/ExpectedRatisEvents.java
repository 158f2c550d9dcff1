package io.eyrie.tools;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.filter.Filter;
import ch.qos.logback.core.spi.FilterReply;
import java.util.List;

/**
 * A logback filter that drops what Ratis logs about events that are expected in a healthy
 * cluster and that Eyrie handles itself, whatever their level:
 *
 * <ul>
 *   <li>a request that reached a follower (NotLeaderException, LeaderNotReadyException) and is
 *       retried at the leader;
 *   <li>a peer or client that connects before the other side listens, at start-up or while a
 *       node restarts (connection refused, ServerNotReadyException, AlreadyClosedException);
 *   <li>a request that timed out and that the retry policy sends again (TimeoutIOException);
 *   <li>a request to a leader that is handing its leadership over (LeaderSteppingDownException:
 *       the leader balancing moves leaders at start-up and after a failover, and Eyrie resends);
 *   <li>a request on a connection that closed as its peer stopped or restarted
 *       (ClosedChannelException; Ratis reconnects and Eyrie resends);
 *   <li>Ratis's debugging stack traces ({@code java.lang.Throwable: TRACE}).
 * </ul>
 *
 * Anything else from Ratis (and Netty), and everything from other loggers, passes. Real faults stay loud:
 * a group that cannot elect a leader shows up in Eyrie's own warnings and in {@code eyrie status}.
 */
public final class ExpectedRatisEvents extends Filter<ILoggingEvent> {
  private static final List<String> EXPECTED = List.of("NotLeaderException", "LeaderNotReadyException",
      "ServerNotReadyException", "AlreadyClosedException", "Connection refused", "ConnectException",
      "TimeoutIOException", "StatusRuntimeException: UNAVAILABLE", "LeaderSteppingDownException",
      "ClosedChannelException");

  @Override
  public FilterReply decide(ILoggingEvent e) {
    if (!e.getLoggerName().startsWith("org.apache.ratis") && !e.getLoggerName().startsWith("io.netty")) {
      return FilterReply.NEUTRAL;
    }
    return expected(e.getFormattedMessage()) || expected(e.getThrowableProxy()) ? FilterReply.DENY
        : FilterReply.NEUTRAL;
  }

  private static boolean expected(String text) {
    if (text == null) {
      return false;
    }
    for (String s : EXPECTED) {
      if (text.contains(s)) {
        return true;
      }
    }
    return false;
  }

  private static boolean expected(IThrowableProxy t) {
    for (int depth = 0; t != null && depth < 10; depth++, t = t.getCause()) {
      if ("TRACE".equals(t.getMessage()) || expected(t.getClassName()) || expected(t.getMessage())) {
        return true;
      }
    }
    return false;
  }
}
