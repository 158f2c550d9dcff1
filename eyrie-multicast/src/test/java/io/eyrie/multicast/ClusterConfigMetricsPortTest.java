package io.eyrie.multicast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The optional {@code metrics=PORT} of a node line: parsed, written back, validated. */
@Timeout(30)
class ClusterConfigMetricsPortTest {
  private static final String TEXT = """
      node 1 127.0.0.1 raft=7101 client=7201 metrics=7501
      node 2 127.0.0.1 raft=7102 client=7202
      group p0 partition 1,2
      """;

  @Test
  void parsedAndWrittenBack() {
    ClusterConfig c = ClusterConfig.parse(TEXT);
    assertEquals(7501, c.metricsPort(1));
    assertEquals(0, c.metricsPort(2));
    assertEquals(c, ClusterConfig.parse(c.toText()));
    assertTrue(c.toText().contains("metrics=7501"));
  }

  @Test
  void aBadFieldNamesItsLine() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ClusterConfig.parse(TEXT.replace("metrics=7501", "metric=7501")));
    assertTrue(e.getMessage().contains("line 1"), e.getMessage());
  }
}
