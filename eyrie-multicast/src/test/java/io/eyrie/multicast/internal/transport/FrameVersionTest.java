package io.eyrie.multicast.internal.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.Codec;
import io.eyrie.multicast.CodecRegistry;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.internal.Wire;
import io.eyrie.multicast.testing.RawConnection;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Frame versions on the client port (design 4.7.1): a frame without a version (what every
 * earlier build writes) and one that says version 1 are served; one of a newer version is
 * answered {@code BAD_REQUEST} naming both versions, that connection is closed, and the node
 * keeps serving the others.
 */
@Timeout(60)
class FrameVersionTest {
  private static final Codec CODEC = new Codec(CodecRegistry.empty());
  private static final int MAX = 1024;
  private static final GroupId P0 = GroupId.valueOf("p0");

  private static byte[] query(long id, String q) {
    return CODEC.encode(new Wire.QueryRequest(id, P0, CODEC.encode(q)));
  }

  /** The body with a version before it: the marker, the version as a varint, the object. */
  private static byte[] versioned(int version, byte[] body) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(FrameVersion.MARKER);
    int v = version;
    while ((v & ~0x7f) != 0) {
      out.write((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    out.write(v);
    out.writeBytes(body);
    return out.toByteArray();
  }

  private static byte[] framed(byte[] body) {
    return ByteBuffer.allocate(4 + body.length).putInt(body.length).put(body).array();
  }

  private static List<Wire.ClientReply> replies(EmbeddedChannel ch) {
    return FrameCodecTest.replies(ch);
  }

  @Test
  void framesWithoutAVersionAndOfVersionOneAreServed() {
    EmbeddedChannel ch = new EmbeddedChannel(ClientEndpoint.initializer(CODEC, new ClientEndpointTest.Echo(), MAX));
    ch.writeInbound(Unpooled.wrappedBuffer(framed(query(1, "plain"))));
    ch.writeInbound(Unpooled.wrappedBuffer(framed(versioned(1, query(2, "v1")))));
    List<Wire.ClientReply> rs = replies(ch);
    assertEquals(2, rs.size(), rs.toString());
    assertEquals(1, rs.get(0).requestId());
    assertEquals("plain", CODEC.decode(rs.get(0).body()));
    assertEquals(2, rs.get(1).requestId());
    assertEquals("v1", CODEC.decode(rs.get(1).body()));
    assertTrue(ch.isOpen());
    ch.finishAndReleaseAll();
  }

  @Test
  void aFrameOfANewerVersionIsAnsweredNamingBothVersionsAndClosed() {
    for (int newer : new int[] {FrameVersion.VERSION + 1, 300, Integer.MAX_VALUE}) {
      EmbeddedChannel ch = new EmbeddedChannel(ClientEndpoint.initializer(CODEC, new ClientEndpointTest.Echo(), MAX));
      // A valid frame right behind it is not served: the connection speaks a version this build does not.
      ch.writeInbound(Unpooled.wrappedBuffer(framed(versioned(newer, query(1, "new"))), framed(query(2, "plain"))));
      List<Wire.ClientReply> rs = replies(ch);
      assertEquals(1, rs.size(), rs.toString());
      assertEquals(-1, rs.get(0).requestId());
      assertEquals(Status.BAD_REQUEST, rs.get(0).status());
      assertEquals("unsupported frame version " + newer + ": this build reads frame version " + FrameVersion.VERSION
          + "; upgrade this node", rs.get(0).error());
      assertFalse(ch.isOpen());
      ch.finishAndReleaseAll();
    }
  }

  @Test
  void aVersionThatDoesNotEndOrIsZeroIsAMalformedFrame() {
    // Version 0 is how Kryo starts a class by name: refused without looking the name up.
    for (byte[] body : new byte[][] {{FrameVersion.MARKER, (byte) 0x80, (byte) 0x80}, versioned(0, query(1, "zero"))}) {
      EmbeddedChannel ch = new EmbeddedChannel(ClientEndpoint.initializer(CODEC, new ClientEndpointTest.Echo(), MAX));
      ch.writeInbound(Unpooled.wrappedBuffer(framed(body)));
      List<Wire.ClientReply> rs = replies(ch);
      assertEquals(1, rs.size(), rs.toString());
      assertEquals(Status.BAD_REQUEST, rs.get(0).status());
      assertTrue(rs.get(0).error().startsWith("malformed frame: "), rs.get(0).error());
      assertFalse(ch.isOpen());
      ch.finishAndReleaseAll();
    }
  }

  @Test
  void theNodeKeepsServingAfterRefusingANewerFrame() throws Exception {
    try (ClientEndpoint ep = ClientEndpoint.start("127.0.0.1", 0, CODEC, new ClientEndpointTest.Echo(), MAX);
        RawConnection old = new RawConnection("127.0.0.1", ep.port(), CODEC)) {
      old.timeout(10_000);
      old.sendRaw(query(1, "before"));
      assertEquals("before", CODEC.decode(((Wire.ClientReply) old.receive()).body()));
      try (RawConnection newer = new RawConnection("127.0.0.1", ep.port(), CODEC)) {
        newer.timeout(10_000);
        newer.sendRaw(versioned(FrameVersion.VERSION + 1, query(2, "newer")));
        Wire.ClientReply r = (Wire.ClientReply) newer.receive();
        assertNotNull(r);
        assertEquals(Status.BAD_REQUEST, r.status());
        assertTrue(r.error().startsWith("unsupported frame version " + (FrameVersion.VERSION + 1)), r.error());
        assertTrue(newer.closedByPeer(), "the refused connection is closed");
      }
      old.sendRaw(query(3, "after"));
      Wire.ClientReply r = (Wire.ClientReply) old.receive();
      assertEquals(3, r.requestId());
      assertEquals("after", CODEC.decode(r.body()));
      try (RawConnection fresh = new RawConnection("127.0.0.1", ep.port(), CODEC)) {
        fresh.timeout(10_000);
        fresh.sendRaw(versioned(1, query(4, "fresh")));
        assertEquals("fresh", CODEC.decode(((Wire.ClientReply) fresh.receive()).body()));
      }
    }
  }
}
