package io.eyrie.multicast;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.internal.Wire;
import io.eyrie.multicast.testing.MulticastChecker;
import io.eyrie.multicast.testing.RawConnection;
import io.eyrie.multicast.testing.RecordingDeliverer;
import io.eyrie.multicast.testing.Waits;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A command resent with the same id, through another node, executes once and gets the same reply. */
@Timeout(120)
class ExactlyOnceTest {

  @Test
  void retriedThroughAnotherNodeExecutesOnce() throws Exception {
    try (EmbeddedCluster c = EmbeddedCluster.newBuilder().nodes(3).partitions(2)
        .deliverers((g, cl, codec) -> new RecordingDeliverer()).start()) {
      Codec codec = new Codec(CodecRegistry.empty());
      GroupId p0 = GroupId.valueOf("p0");
      GroupId p1 = GroupId.valueOf("p1");
      long token = 4242L;
      Wire.Start start = new Wire.Start(MsgId.valueOf(77, 0, 0), new GroupId[] {p0, p1}, p1,
          codec.encode(token), 0);
      ClusterConfig.NodeInfo n1 = c.cluster().node(1);
      ClusterConfig.NodeInfo n2 = c.cluster().node(2);
      ClusterConfig.NodeInfo n3 = c.cluster().node(3);
      try (RawConnection a = new RawConnection(n1.host(), n1.clientPort(), codec);
           RawConnection b = new RawConnection(n2.host(), n2.clientPort(), codec);
           RawConnection d = new RawConnection(n3.host(), n3.clientPort(), codec)) {
        // Two copies in flight at once through two nodes, then a late third one.
        a.send(new Wire.ClientRequest(1, start));
        b.send(new Wire.ClientRequest(2, start));
        Wire.ClientReply ra = (Wire.ClientReply) a.receive();
        Wire.ClientReply rb = (Wire.ClientReply) b.receive();
        d.send(new Wire.ClientRequest(3, start));
        Wire.ClientReply rd = (Wire.ClientReply) d.receive();
        assertEquals(Status.OK, ra.status(), String.valueOf(ra.error()));
        assertEquals(Status.OK, rb.status(), String.valueOf(rb.error()));
        assertEquals(Status.OK, rd.status(), String.valueOf(rd.error()));
        assertArrayEquals(ra.body(), rb.body());
        assertArrayEquals(ra.body(), rd.body());
        assertEquals(1, ra.requestId());
        assertEquals(2, rb.requestId());
      }
      Waits.until(Duration.ofSeconds(30), () -> MulticastChecker.sequences(c).values().stream()
          .allMatch(m -> m.values().stream().allMatch(s -> s.contains(token))), () -> "delivered everywhere");
      for (Map.Entry<GroupId, Map<Integer, List<Long>>> g : MulticastChecker.sequences(c).entrySet()) {
        for (Map.Entry<Integer, List<Long>> r : g.getValue().entrySet()) {
          assertEquals(1, Collections.frequency(r.getValue(), token),
              "executions of the command at " + g.getKey() + " node " + r.getKey());
        }
      }
      // A resend may be answered from the reply of the first copy before its own start is
      // applied, so the duplicates show up a little later than the replies.
      Waits.until(Duration.ofSeconds(30), () -> {
        long dups = 0;
        for (Node n : c.runningNodes().values()) {
          dups += n.stats(p1).duplicates();
        }
        return dups > 0;
      }, () -> "the resends were recognized as duplicates");
    }
  }
}
