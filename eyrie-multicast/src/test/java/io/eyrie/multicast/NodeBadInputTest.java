package io.eyrie.multicast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.internal.Wire;
import io.eyrie.multicast.testing.RawConnection;
import io.eyrie.multicast.testing.RecordingDeliverer;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Garbage, oversized frames, unregistered classes and invalid messages against a real node's
 * client port are answered with an error or a closed connection, while a well-behaved client on
 * the same node keeps getting correct answers.
 */
@Timeout(180)
class NodeBadInputTest {

  /** A class that no registry knows. */
  static final class Intruder {
    String what = "not registered";
  }

  @Test
  void badInputDoesNotDisturbGoodClients() throws Exception {
    try (EmbeddedCluster c = EmbeddedCluster.newBuilder().nodes(3).partitions(2)
        .options(NodeOptions.newBuilder().maxFrameBytes(64 << 10).build())
        .deliverers((g, cl, codec) -> new RecordingDeliverer()).start();
         MulticastClient good = c.newClient()) {
      GroupId p0 = GroupId.valueOf("p0");
      GroupId p1 = GroupId.valueOf("p1");
      AtomicBoolean stop = new AtomicBoolean();
      AtomicInteger goodOk = new AtomicInteger();
      List<Throwable> goodErrors = new ArrayList<>();
      Thread goodLoop = new Thread(() -> {
        long t = 0;
        while (!stop.get()) {
          try {
            Object r = good.multicast(Set.of(p0, p1), p0, ++t).get(30, TimeUnit.SECONDS);
            assertTrue(r instanceof Long, "reply is the delivery position");
            goodOk.incrementAndGet();
          } catch (Throwable e) {
            synchronized (goodErrors) {
              goodErrors.add(e);
            }
            return;
          }
        }
      });
      goodLoop.start();
      ClusterConfig.NodeInfo n1 = c.cluster().node(1);
      Codec codec = new Codec(CodecRegistry.empty());
      Random rnd = new Random(7);

      // 1. Garbage bytes in a well-formed frame: error reply, then the node closes the connection.
      try (RawConnection raw = new RawConnection(n1.host(), n1.clientPort(), codec)) {
        byte[] junk = new byte[200];
        rnd.nextBytes(junk);
        junk[0] = (byte) 0x7f;
        raw.sendRaw(junk);
        assertErrorOrClosed(raw);
      }
      // 2. A frame larger than the limit.
      try (RawConnection raw = new RawConnection(n1.host(), n1.clientPort(), codec)) {
        raw.sendBytes(new byte[] {0, 0x10, 0, 0});
        raw.sendBytes(new byte[4096]);
        assertErrorOrClosed(raw);
      }
      // 3. A Kryo frame naming a class the node does not know.
      try (RawConnection raw = new RawConnection(n1.host(), n1.clientPort(), codec)) {
        Kryo loose = new Kryo();
        loose.setRegistrationRequired(false);
        Output out = new Output(256, -1);
        loose.writeClassAndObject(out, new Intruder());
        raw.sendRaw(out.toBytes());
        assertErrorOrClosed(raw);
      }
      // 4. Well-formed requests with invalid content get error replies on a connection that stays usable.
      try (RawConnection raw = new RawConnection(n1.host(), n1.clientPort(), codec)) {
        Wire.Start unknownGroup = new Wire.Start(MsgId.valueOf(9, 0, 0), new GroupId[] {GroupId.valueOf("nope")},
            GroupId.valueOf("nope"), codec.encode(1L), 0);
        raw.send(new Wire.ClientRequest(11, unknownGroup));
        Wire.ClientReply r = (Wire.ClientReply) raw.receive();
        assertEquals(11, r.requestId());
        assertEquals(Status.BAD_REQUEST, r.status(), r.error());
        Wire.Start unsorted = new Wire.Start(MsgId.valueOf(9, 1, 0), new GroupId[] {p1, p0}, p0, codec.encode(2L), 0);
        raw.send(new Wire.ClientRequest(12, unsorted));
        r = (Wire.ClientReply) raw.receive();
        assertEquals(12, r.requestId());
        assertEquals(Status.BAD_REQUEST, r.status(), r.error());
        raw.send("a string is not a request");
        r = (Wire.ClientReply) raw.receive();
        assertNotEquals(Status.OK, r.status());
        Wire.Start fine = new Wire.Start(MsgId.valueOf(9, 2, 0), new GroupId[] {p0}, p0, codec.encode(3L), 0);
        raw.send(new Wire.ClientRequest(13, fine));
        r = (Wire.ClientReply) raw.receive();
        assertEquals(13, r.requestId());
        assertEquals(Status.OK, r.status(), r.error());
      }
      int before = goodOk.get();
      io.eyrie.multicast.testing.Waits.until(java.time.Duration.ofSeconds(30), () -> goodOk.get() > before + 20,
          () -> "the good client keeps being served");
      stop.set(true);
      goodLoop.join();
      assertTrue(goodErrors.isEmpty(), "good client failed: " + goodErrors);
    }
  }

  private static void assertErrorOrClosed(RawConnection raw) throws IOException {
    Wire.ClientReply r = (Wire.ClientReply) raw.receiveOrReset();
    if (r != null) {
      assertEquals(Status.BAD_REQUEST, r.status(), "error reply expected, got " + r);
      assertTrue(raw.closedByPeer(), "the node closes a connection whose framing it cannot trust");
    }
  }
}
