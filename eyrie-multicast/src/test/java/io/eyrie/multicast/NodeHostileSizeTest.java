package io.eyrie.multicast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.internal.Wire;
import io.eyrie.multicast.testing.RawConnection;
import io.eyrie.multicast.testing.StatelessDeliverer;
import io.eyrie.multicast.testing.Waits;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A payload of a few bytes declaring a huge array (issue 26 item 0) is refused when a node admits
 * it, before it is logged: it gets an error reply, no replica delivers it, nothing large is
 * allocated, and the node keeps serving.
 */
@Timeout(120)
class NodeHostileSizeTest {
  private static final long MAX_ALLOCATION = 64L << 20;

  /** Counts every delivery, whatever the payload, and replies with the count. */
  static final class Counting extends StatelessDeliverer {
    final AtomicInteger delivered = new AtomicInteger();

    @Override
    public Execution deliver(ExecutionContext ctx) {
      return Execution.reply((long) delivered.incrementAndGet());
    }

    @Override
    public Object query(Object query) {
      return (long) delivered.get();
    }
  }

  @Test
  void hostileDeclaredSizesAreRefusedAtAdmission() throws Exception {
    List<Counting> replicas = new CopyOnWriteArrayList<>();
    try (EmbeddedCluster c = EmbeddedCluster.newBuilder().nodes(3).partitions(1)
        .options(NodeOptions.newBuilder().registry(HostileSizes.registry()).build())
        .deliverers((g, cl, codec) -> {
          Counting d = new Counting();
          replicas.add(d);
          return d;
        }).start();
         MulticastClient good = c.newClient()) {
      GroupId p0 = GroupId.valueOf("p0");
      assertEquals(1L, good.multicast(Set.of(p0), 1L).get(30, TimeUnit.SECONDS));
      ClusterConfig.NodeInfo n1 = c.cluster().node(1);
      Codec codec = new Codec(HostileSizes.registry());
      try (RawConnection raw = new RawConnection(n1.host(), n1.clientPort(), codec)) {
        long seq = 0;
        for (long count : new long[] {1L << 26, 1L << 29, (1L << 31) - 2}) {
          byte[] payload = HostileSizes.seed(count);
          assertTrue(payload.length <= 10, "a few bytes: " + payload.length);
          long before = HostileSizes.allocatedEverywhere();
          Wire.Start s = new Wire.Start(MsgId.valueOf(77, ++seq, 0), new GroupId[] {p0}, p0, payload, 0);
          raw.send(new Wire.ClientRequest(seq, s));
          Wire.ClientReply r = (Wire.ClientReply) raw.receive();
          assertEquals(seq, r.requestId());
          assertEquals(Status.BAD_REQUEST, r.status(), "refused at admission: " + r.error());
          assertTrue(r.error().contains("malformed payload") && r.error().contains("declares " + count),
              r.error());
          raw.send(new Wire.QueryRequest(100 + seq, p0, payload));
          r = (Wire.ClientReply) raw.receive();
          assertEquals(100 + seq, r.requestId());
          assertEquals(Status.BAD_REQUEST, r.status(), "query refused at admission: " + r.error());
          assertTrue(r.error().contains("malformed query"), r.error());
          long allocated = HostileSizes.allocatedEverywhere() - before;
          assertTrue(allocated < MAX_ALLOCATION, count + " elements declared: the JVM's threads allocated "
              + allocated + " bytes");
        }
      }
      // The node keeps serving, and no replica delivered a hostile message.
      assertEquals(2L, good.multicast(Set.of(p0), 2L).get(30, TimeUnit.SECONDS));
      Waits.until(Duration.ofSeconds(30), () -> replicas.size() == 3
          && replicas.stream().allMatch(d -> d.delivered.get() == 2),
          () -> "every replica delivers the two good messages only: "
              + replicas.stream().map(d -> d.delivered.get()).toList());
    }
  }
}
