package io.eyrie.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.bench.MulticastBenchmark.Row;
import io.eyrie.multicast.NodeOptions.RaftTransport;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The multicast benchmark's result files name the Raft transport and TLS of the run, so that the
 * four runs of issue 28 (netty and grpc, TLS on and off) can share one {@code --out}.
 */
@Timeout(30)
class MulticastReportTest {
  @Test
  void theFilesAndTheReportNameTheTransportAndTls(@TempDir Path dir) throws Exception {
    assertEquals("multicast", MulticastReport.fileName(RaftTransport.NETTY, false));
    assertEquals("multicast-netty-tls", MulticastReport.fileName(RaftTransport.NETTY, true));
    assertEquals("multicast-grpc", MulticastReport.fileName(RaftTransport.GRPC, false));
    assertEquals("multicast-grpc-tls", MulticastReport.fileName(RaftTransport.GRPC, true));
    List<Row> rows = List.of(new Row("multicast", 1, 1000, 1, 2, 0, "-"));
    MulticastReport.write(dir, rows, 1, 1, 1, 1, RaftTransport.GRPC, true);
    String md = Files.readString(dir.resolve("multicast-grpc-tls.md"), StandardCharsets.UTF_8);
    assertTrue(md.contains("Raft transport **grpc**, TLS **on**"), md);
    assertTrue(Files.exists(dir.resolve("multicast-grpc-tls.csv")));
  }
}
