package io.eyrie.multicast.internal.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.EchoDeliverers;
import io.eyrie.multicast.EmbeddedCluster;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MulticastClient;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.multicast.testing.RawConnection;
import io.eyrie.multicast.testing.Waits;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.thirdparty.io.netty.buffer.ByteBuf;
import org.apache.ratis.thirdparty.io.netty.buffer.Unpooled;
import org.apache.ratis.thirdparty.io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Raft port's frame limit (issue 28): frames pass through unchanged however the bytes are
 * split, a frame declared over the limit or a malformed length prefix closes the connection, and
 * on a real cluster a raw socket that declares a 1 GiB frame to a node's Raft port is closed while
 * the cluster keeps serving.
 */
@Timeout(120)
class RaftFrameLimitTest {

  private static byte[] varint(long v) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    while ((v & ~0x7fL) != 0) {
      out.write((int) ((v & 0x7f) | 0x80));
      v >>>= 7;
    }
    out.write((int) v);
    return out.toByteArray();
  }

  private static byte[] frame(int length) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(varint(length));
    for (int i = 0; i < length; i++) {
      out.write(i);
    }
    return out.toByteArray();
  }

  @Test
  void framesUnderTheLimitPassUnchangedHoweverTheyAreSplit() {
    RaftPortCounters counters = new RaftPortCounters();
    EmbeddedChannel ch = new EmbeddedChannel(new RaftFrameLimit(1000, counters));
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    all.writeBytes(frame(1000));
    all.writeBytes(frame(200)); // a two-byte prefix
    all.writeBytes(frame(0));
    all.writeBytes(frame(999));
    byte[] bytes = all.toByteArray();
    // One byte at a time: every prefix and body is split at every point.
    for (byte b : bytes) {
      ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {b}));
    }
    ByteArrayOutputStream seen = new ByteArrayOutputStream();
    for (ByteBuf b; (b = ch.readInbound()) != null; ) {
      byte[] x = new byte[b.readableBytes()];
      b.readBytes(x);
      seen.writeBytes(x);
      b.release();
    }
    assertArrayEquals(bytes, seen.toByteArray(), "the bytes reach Ratis's decoder as they came");
    assertTrue(ch.isOpen());
    assertEquals(0, counters.frameRefusals(), "nothing refused");
  }

  @Test
  void aFrameOverTheLimitOrAMalformedPrefixClosesTheConnection() {
    RaftPortCounters counters = new RaftPortCounters();
    EmbeddedChannel over = new EmbeddedChannel(new RaftFrameLimit(1000, counters));
    over.writeInbound(Unpooled.wrappedBuffer(frame(10)));
    over.writeInbound(Unpooled.wrappedBuffer(varint(1001)));
    assertFalse(over.isOpen(), "a frame of 1001 bytes against a limit of 1000");
    assertEquals(1, counters.frameRefusals(), "the refusal is counted");
    EmbeddedChannel malformed = new EmbeddedChannel(new RaftFrameLimit(1000, counters));
    malformed.writeInbound(Unpooled.wrappedBuffer(new byte[] {(byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80,
        (byte) 0x80, 1}));
    assertFalse(malformed.isOpen(), "a length prefix of six bytes");
    assertEquals(2, counters.frameRefusals(), "each refusal is counted once");
  }

  @Test
  void theLimitGrowsWithTheClientPortsFramesAndReachesTheServers() {
    assertEquals(RaftFrameLimit.MAX_FRAME_BYTES, RaftFrameLimit.forClientFrames(4 << 20));
    long big = RaftFrameLimit.forClientFrames(100 << 20);
    assertTrue(big >= 2L * (100 << 20), "a start entry of a 100 MiB client frame still passes: " + big);
    NodeOptions o = NodeOptions.newBuilder().maxFrameBytes(100 << 20).build();
    assertEquals(big, RaftFrameLimit.of(RatisSupport.parameters(o, new RaftPortCounters())), "the node's Ratis parameters carry it");
    assertEquals(RaftFrameLimit.MAX_FRAME_BYTES, RaftFrameLimit.of(null));
  }

  @Test
  void aNodeClosesARaftConnectionThatDeclaresAHugeFrameAndKeepsServing() throws Exception {
    try (EmbeddedCluster c = EmbeddedCluster.newBuilder().nodes(3).partitions(1).oracle(false)
        .deliverers(new EchoDeliverers()).start();
         MulticastClient client = c.newClient()) {
      c.awaitLeaders(Duration.ofSeconds(60));
      GroupId g = c.cluster().groupIds().iterator().next();
      for (int node : c.cluster().nodes().keySet()) {
        try (Socket s = new Socket()) {
          s.connect(new InetSocketAddress("127.0.0.1", c.cluster().node(node).raftPort()), 5000);
          s.setSoTimeout(200);
          OutputStream out = s.getOutputStream();
          out.write(varint(1L << 30));
          out.write(new byte[4096]);
          out.flush();
          Waits.until(Duration.ofSeconds(20), () -> RawConnection.closedByPeer(s),
              () -> "node " + node + " closed the connection that declared a 1 GiB frame");
        }
        assertEquals(1, c.node(node).raftPortStats().frameRefusals(), "node " + node + " counted the refusal");
      }
      Object answer = client.multicast(Set.of(g), new byte[] {7}).get(60, TimeUnit.SECONDS);
      assertEquals(byte[].class, answer.getClass(), "the cluster still serves");
    }
  }
}
