package io.eyrie.chirper;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link ProgressLine.Loading}: a line at most once per interval, with the count and the rate so far. */
@Timeout(10)
class LoadProgressTest {
  @Test
  void printsAtMostOncePerIntervalWithCountAndRate() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    AtomicLong now = new AtomicLong();
    ProgressLine.Loading p = new ProgressLine.Loading(new PrintStream(bytes, true, StandardCharsets.UTF_8), "users", 10_000,
        2_000_000_000L, now::get);
    for (int i = 0; i < 3_000; i++) {
      p.advance(); // within the first interval: nothing printed
    }
    now.set(2_000_000_000L);
    p.advance();
    p.advance(); // same instant: no second line
    now.set(3_000_000_000L);
    p.advance(); // less than an interval since the last line
    now.set(4_000_000_000L);
    p.advance();
    List<String> lines = bytes.toString(StandardCharsets.UTF_8).lines().toList();
    assertEquals(List.of("users: 3,001 of 10,000 (1,501/s)", "users: 3,004 of 10,000 (751/s)"), lines);
    assertEquals(3_004, p.done());
  }
}
