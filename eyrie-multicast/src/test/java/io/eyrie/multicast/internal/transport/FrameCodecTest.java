package io.eyrie.multicast.internal.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.CodecRegistry;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.internal.Wire;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.util.ResourceLeakDetector;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The client port's framing on an {@link EmbeddedChannel}: splitting, bad frames, reply ids, leaks. */
@Timeout(60)
class FrameCodecTest {
  private static final Codec CODEC = new Codec(CodecRegistry.empty());
  private static final int MAX = 1024;
  private static final GroupId P0 = GroupId.valueOf("p0");
  private static final GroupId P1 = GroupId.valueOf("p1");
  private static ResourceLeakDetector.Level previous;

  /** A class that no registry knows. */
  static final class Intruder {
    String what = "not registered";
  }

  /** Answers every request OK with a fixed body and a wrong request id, and counts calls. */
  static final class Recording implements RequestHandler {
    final List<Object> calls = new ArrayList<>();

    @Override
    public CompletableFuture<Wire.ClientReply> multicast(Wire.ClientRequest r) {
      calls.add(r);
      return CompletableFuture.completedFuture(new Wire.ClientReply(999, Status.OK, r.start().payload(), null, 3));
    }

    @Override
    public CompletableFuture<Wire.ClientReply> query(Wire.QueryRequest q) {
      calls.add(q);
      return CompletableFuture.failedFuture(new IllegalStateException("no leader for " + q.group()));
    }
  }

  @BeforeAll
  static void paranoid() {
    previous = ResourceLeakDetector.getLevel();
    ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
  }

  @AfterAll
  static void restore() {
    ResourceLeakDetector.setLevel(previous);
  }

  private static Wire.ClientRequest request(long requestId) {
    return new Wire.ClientRequest(requestId, new Wire.Start(MsgId.valueOf(7, 3, 0), new GroupId[] {P0, P1}, P0,
        CODEC.encode("hello"), 2));
  }

  private static byte[] framed(byte[] body) {
    return ByteBuffer.allocate(4 + body.length).putInt(body.length).put(body).array();
  }

  private static ByteBuf buf(byte[] b, int off, int len, boolean direct) {
    ByteBuf out = direct ? Unpooled.directBuffer(Math.max(len, 1)) : Unpooled.buffer(Math.max(len, 1));
    return out.writeBytes(b, off, len);
  }

  private static void assertSameRequest(Wire.ClientRequest want, Object got) {
    Wire.ClientRequest r = assertInstanceOf(Wire.ClientRequest.class, got);
    assertEquals(want.requestId(), r.requestId());
    assertEquals(want.start().id(), r.start().id());
    assertArrayEquals(want.start().dests(), r.start().dests());
    assertEquals(want.start().replyGroup(), r.start().replyGroup());
    assertArrayEquals(want.start().payload(), r.start().payload());
    assertEquals(want.start().watermark(), r.start().watermark());
  }

  /** Drains and releases the outbound buffers and parses them as length-prefixed replies (also for FrameVersionTest). */
  static List<Wire.ClientReply> replies(EmbeddedChannel ch) {
    ch.runPendingTasks();
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    for (ByteBuf b; (b = ch.readOutbound()) != null; ) {
      byte[] bytes = new byte[b.readableBytes()];
      b.readBytes(bytes);
      all.writeBytes(bytes);
      assertTrue(b.release(), "outbound buffer released exactly once");
    }
    ByteBuffer in = ByteBuffer.wrap(all.toByteArray());
    List<Wire.ClientReply> out = new ArrayList<>();
    while (in.hasRemaining()) {
      byte[] body = new byte[in.getInt()];
      in.get(body);
      out.add(CODEC.decode(body, Wire.ClientReply.class));
    }
    return out;
  }

  private static EmbeddedChannel endpoint(RequestHandler h) {
    return new EmbeddedChannel(ClientEndpoint.initializer(CODEC, h, MAX));
  }

  @Test
  void frameSplitAtEveryBoundaryDecodesOnce() {
    Wire.ClientRequest req = request(42);
    byte[] wire = framed(CODEC.encode(req));
    for (int cut = 0; cut <= wire.length; cut++) {
      EmbeddedChannel ch = new EmbeddedChannel(new LengthFieldBasedFrameDecoder(MAX, 0, 4, 0, 4), new FrameCodec(CODEC));
      ByteBuf a = buf(wire, 0, cut, cut % 2 == 0);
      ByteBuf b = buf(wire, cut, wire.length - cut, cut % 2 == 1);
      ch.writeInbound(a);
      ch.writeInbound(b);
      assertSameRequest(req, ch.readInbound());
      assertNull(ch.readInbound(), "exactly one object at cut " + cut);
      assertFalse(ch.finish());
      assertEquals(0, a.refCnt(), "input released at cut " + cut);
      assertEquals(0, b.refCnt(), "input released at cut " + cut);
    }
  }

  @Test
  void byteByByteThroughTheEndpointPipelineAnswersWithTheRequestId() {
    Recording h = new Recording();
    EmbeddedChannel ch = endpoint(h);
    Wire.ClientRequest req = request(42);
    byte[] wire = framed(CODEC.encode(req));
    List<ByteBuf> fed = new ArrayList<>();
    for (int i = 0; i < wire.length; i++) {
      ByteBuf one = buf(wire, i, 1, i % 3 == 0);
      fed.add(one);
      ch.writeInbound(one);
      assertEquals(i == wire.length - 1 ? 1 : 0, h.calls.size(), "handler called only once the frame is whole");
    }
    assertSameRequest(req, h.calls.get(0));
    List<Wire.ClientReply> rs = replies(ch);
    assertEquals(1, rs.size());
    assertEquals(42, rs.get(0).requestId(), "the endpoint replaces the handler's request id");
    assertEquals(Status.OK, rs.get(0).status());
    assertEquals(3, rs.get(0).leaderHint());
    assertEquals("hello", CODEC.decode(rs.get(0).body()));
    assertTrue(ch.isOpen());
    ch.finishAndReleaseAll();
    fed.forEach(b -> assertEquals(0, b.refCnt()));
  }

  @Test
  void failedHandlerFutureAnswersError() {
    EmbeddedChannel ch = endpoint(new Recording());
    ch.writeInbound(Unpooled.wrappedBuffer(framed(CODEC.encode(new Wire.QueryRequest(5, P1, CODEC.encode(1L))))));
    List<Wire.ClientReply> rs = replies(ch);
    assertEquals(1, rs.size());
    assertEquals(5, rs.get(0).requestId());
    assertEquals(Status.ERROR, rs.get(0).status());
    assertEquals("no leader for p1", rs.get(0).error());
    assertTrue(ch.isOpen());
    ch.finishAndReleaseAll();
  }

  private static void assertRejectedAndClosed(byte[] inbound, String errorPrefix) {
    Recording h = new Recording();
    EmbeddedChannel ch = endpoint(h);
    // A valid request right behind the bad bytes must not be served: the stream is not trusted.
    byte[] good = framed(CODEC.encode(request(9)));
    ByteBuf in = Unpooled.buffer().writeBytes(inbound).writeBytes(good);
    ch.writeInbound(in);
    List<Wire.ClientReply> rs = replies(ch);
    assertEquals(1, rs.size(), "one error reply: " + rs);
    assertEquals(-1, rs.get(0).requestId());
    assertEquals(Status.BAD_REQUEST, rs.get(0).status());
    assertTrue(rs.get(0).error().startsWith(errorPrefix), rs.get(0).error());
    assertFalse(ch.isOpen(), "connection closed");
    assertTrue(h.calls.isEmpty(), "nothing reached the handler: " + h.calls);
    ch.finishAndReleaseAll();
    assertEquals(0, in.refCnt());
  }

  @Test
  void garbageFramesAreRejectedAndClosed() {
    byte[] junk = new byte[200];
    new Random(11).nextBytes(junk);
    junk[0] = (byte) 0x7f; // names class id 125, which nothing registers
    assertRejectedAndClosed(framed(junk), "malformed frame: ");
    byte[] truncated = CODEC.encode(request(1));
    assertRejectedAndClosed(framed(java.util.Arrays.copyOf(truncated, truncated.length - 3)), "malformed frame: ");
    byte[] trailing = java.util.Arrays.copyOf(truncated, truncated.length + 2);
    assertRejectedAndClosed(framed(trailing), "malformed frame: ");
    assertRejectedAndClosed(framed(new byte[0]), "malformed frame: ");
  }

  @Test
  void oversizedFrameIsRejectedAndClosed() {
    byte[] big = new byte[4 + 4096];
    ByteBuffer.wrap(big).putInt(4096);
    assertRejectedAndClosed(big, "frame exceeds " + MAX + " bytes");
    // The length is unsigned: a "negative" one is just very long.
    assertRejectedAndClosed(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xf0}, "frame exceeds ");
    // Only the header has arrived: the endpoint refuses without waiting for the body.
    EmbeddedChannel ch = endpoint(new Recording());
    ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {0, 0x10, 0, 0}));
    List<Wire.ClientReply> rs = replies(ch);
    assertEquals(1, rs.size());
    assertEquals(Status.BAD_REQUEST, rs.get(0).status());
    assertFalse(ch.isOpen());
    ch.finishAndReleaseAll();
  }

  @Test
  void unregisteredClassIsRejectedAndClosed() {
    Kryo loose = new Kryo();
    loose.setRegistrationRequired(false);
    Output out = new Output(256, -1);
    loose.writeClassAndObject(out, new Intruder());
    assertRejectedAndClosed(framed(out.toBytes()), "malformed frame: ");
    // A raw frame naming class id 500 (Kryo writes id + 2 as a varint: 502 = 0xf6 0x03).
    assertRejectedAndClosed(framed(new byte[] {(byte) 0xf6, 0x03, 1, 2, 3}), "malformed frame: ");
  }

  @Test
  void wellFormedFrameOfTheWrongTypeKeepsTheConnection() {
    Recording h = new Recording();
    EmbeddedChannel ch = endpoint(h);
    ch.writeInbound(Unpooled.wrappedBuffer(framed(CODEC.encode("a string is not a request"))));
    ch.writeInbound(Unpooled.wrappedBuffer(framed(CODEC.encode(null))));
    ch.writeInbound(Unpooled.wrappedBuffer(framed(CODEC.encode(request(8)))));
    List<Wire.ClientReply> rs = replies(ch);
    assertEquals(3, rs.size(), rs.toString());
    assertEquals(-1, rs.get(0).requestId());
    assertEquals(Status.BAD_REQUEST, rs.get(0).status());
    assertTrue(rs.get(0).error().contains("java.lang.String"), rs.get(0).error());
    assertEquals(-1, rs.get(1).requestId());
    assertEquals(Status.BAD_REQUEST, rs.get(1).status());
    assertEquals(8, rs.get(2).requestId());
    assertEquals(Status.OK, rs.get(2).status());
    assertTrue(ch.isOpen());
    assertEquals(1, h.calls.size());
    ch.finishAndReleaseAll();
  }

  /** A client reply as it was before statuses were an enum, to compare the bytes with. */
  record IntStatusReply(long requestId, int status, byte[] body, String error, int leaderHint) {}

  private static byte[] intStatusReply(int status) {
    Kryo k = new Kryo();
    k.register(byte[].class, 10);
    k.register(IntStatusReply.class, 23);
    Output out = new Output(256, -1);
    k.writeClassAndObject(out, new IntStatusReply(7, status, new byte[] {1, 2}, "why", 3));
    return out.toBytes();
  }

  @Test
  void aStatusTakesTheBytesOfItsOldIntCodeAndAnUnknownCodeIsAMalformedFrame() {
    Status[] byOldCode = {Status.OK, Status.ERROR, Status.UNAVAILABLE, Status.BAD_REQUEST, Status.STALE,
        Status.EXPIRED, Status.FORBIDDEN};
    assertEquals(Status.values().length, byOldCode.length);
    for (int code = 0; code < byOldCode.length; code++) {
      byte[] now = CODEC.encode(new Wire.ClientReply(7, byOldCode[code], new byte[] {1, 2}, "why", 3));
      assertArrayEquals(intStatusReply(code), now, byOldCode[code].toString());
      assertEquals(byOldCode[code], ((Wire.ClientReply) CODEC.decode(now)).status());
    }
    // A status has no Kryo id of its own, so the ids Eyrie's modules register (eyrie-core's
    // start at 40) cannot take it away.
    Codec withModules = new Codec(CodecRegistry.newBuilder().registerEyrie(40, Intruder.class)
        .registerEyrie(41, Intruder[].class).build());
    for (Status s : Status.values()) {
      Wire.ClientReply r = new Wire.ClientReply(7, s, null, "why", 3);
      assertEquals(s, ((Wire.ClientReply) withModules.decode(withModules.encode(r))).status());
    }
    for (int code : new int[] {7, -1, Integer.MAX_VALUE}) {
      byte[] bad = intStatusReply(code);
      assertThrows(IllegalArgumentException.class, () -> CODEC.decode(bad), "code " + code);
      assertRejectedAndClosed(framed(bad), "malformed frame: ");
    }
  }
  /**
   * eyrie-multicast's own classes keep their ids whatever the other modules register: Abandoned
   * had id 40, which eyrie-core's ObjId also takes, and Kryo kept the later registration, so a
   * DS-SMR node could not send Abandoned ("Class is not registered").
   */
  @Test
  void theOtherModulesIdsTakeNothingFromTheMulticastLayer() {
    Codec withModules = new Codec(CodecRegistry.newBuilder().registerEyrie(40, Intruder.class)
        .registerEyrie(41, Intruder[].class).registerEyrie(89, String[][].class).build());
    Wire.Abandoned a = new Wire.Abandoned(new MsgId(5, 6, 0));
    assertEquals(a, withModules.decode(withModules.encode(a)));
    assertThrows(IllegalArgumentException.class, () -> CodecRegistry.newBuilder().registerEyrie(90, Intruder.class),
        "90 to 99 are eyrie-multicast's own");
  }
}
