package io.eyrie.multicast.internal.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.Codec;
import io.eyrie.multicast.CodecRegistry;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.internal.Wire;
import io.eyrie.multicast.testing.RawConnection;
import io.eyrie.multicast.testing.Waits;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The client endpoint's connection limits over real loopback sockets: a half-sent frame is
 * closed after the idle timeout, connections over the caps are refused while open ones keep
 * being served, a connection that pipelines far past its in-flight bound is held back rather
 * than buffered, and past the node's pending bound requests are answered busy. Each limit moves
 * its counter in {@link ClientEndpoint#stats()}.
 */
@Timeout(60)
class ClientEndpointLimitsTest {
  private static final Codec CODEC = new Codec(CodecRegistry.empty());
  private static final GroupId P0 = GroupId.valueOf("p0");

  /** An endpoint on a free loopback port with the limits of the options. */
  private static ClientEndpoint endpoint(RequestHandler handler, NodeOptions.Builder b) throws IOException {
    return ClientEndpoint.start("127.0.0.1", 0, CODEC, handler, ClientEndpoint.Limits.of(b.build()));
  }

  /** Answers queries at once with the query's bytes. */
  static class Echo implements RequestHandler {
    @Override
    public CompletableFuture<Wire.ClientReply> multicast(Wire.ClientRequest r) {
      return CompletableFuture.completedFuture(new Wire.ClientReply(0, Status.OK, r.start().payload(), null, 1));
    }

    @Override
    public CompletableFuture<Wire.ClientReply> query(Wire.QueryRequest q) {
      return CompletableFuture.completedFuture(new Wire.ClientReply(0, Status.OK, q.query(), null, 1));
    }
  }

  /**
   * A raw client socket, optionally from a chosen loopback address: frames through a {@link
   * RawConnection}, and {@link #out} for bytes that are not whole frames.
   */
  static final class Conn implements AutoCloseable {
    final Socket socket;
    final DataOutputStream out;
    private final RawConnection raw;

    Conn(int port) throws IOException {
      this(port, null);
    }

    Conn(int port, String from) throws IOException {
      socket = RawConnection.loopback(port, from);
      raw = new RawConnection(socket, CODEC);
      raw.timeout(10_000);
      out = new DataOutputStream(socket.getOutputStream());
    }

    void send(Object frame) throws IOException {
      raw.send(frame);
    }

    /** The next reply, or null at end of stream. */
    Wire.ClientReply receive() throws IOException {
      return (Wire.ClientReply) raw.receive();
    }

    /** Writes bytes as they are (not a whole frame, or not only) and flushes them. */
    void write(byte[] b) throws IOException {
      write(b, 0, b.length);
    }

    void write(byte[] b, int off, int len) throws IOException {
      out.write(b, off, len);
      out.flush();
    }

    /** The next reply, which must be request {@code id}'s and OK. */
    Wire.ClientReply receiveOk(long id) throws IOException {
      Wire.ClientReply r = receive();
      assertNotNull(r, "the connection is open");
      assertEquals(id, r.requestId());
      assertEquals(Status.OK, r.status(), r.error());
      return r;
    }

    /** True if the peer closed the connection within the socket timeout. */
    boolean closedByPeer() {
      return raw.closedByPeer();
    }

    /** True if the peer closed the connection within {@code ms}; the timeout is 10 s again after. */
    boolean closedByPeerWithin(int ms) throws IOException {
      socket.setSoTimeout(ms);
      try {
        return closedByPeer();
      } finally {
        socket.setSoTimeout(10_000);
      }
    }

    /** Asks a query and checks the answer: the connection is served. */
    void assertServed(long id) throws IOException {
      send(new Wire.QueryRequest(id, P0, CODEC.encode(id)));
      receiveOk(id);
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }

  @Test
  void aHalfSentFrameIsClosedAfterTheIdleTimeout() throws Exception {
    int timeoutMs = 400;
    try (ClientEndpoint ep = endpoint(new Echo(), NodeOptions.newBuilder().frameIdleTimeoutMs(timeoutMs));
        Conn idle = new Conn(ep.port());
        Conn half = new Conn(ep.port())) {
      long start = System.nanoTime();
      // The length prefix of a 100-byte frame and 2 of its bytes, then nothing.
      half.write(new byte[] {0, 0, 0, 100, 1, 2});
      Wire.ClientReply r = half.receive();
      long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertNotNull(r, "answered before being closed");
      assertEquals(-1, r.requestId());
      assertEquals(Status.BAD_REQUEST, r.status());
      assertTrue(r.error().startsWith("no byte of a started frame"), r.error());
      assertTrue(half.closedByPeer(), "closed after the idle timeout");
      assertTrue(tookMs >= timeoutMs - 50, "not before the timeout: " + tookMs + " ms");
      assertEquals(1, ep.stats().frameTimeouts());
      // A connection with no started frame is not idle by this rule: it stays open and served.
      assertFalse(idle.closedByPeerWithin(3 * timeoutMs), "an idle connection without a started frame stays open");
      idle.assertServed(1);
      assertEquals(1, ep.stats().frameTimeouts());
    }
  }

  @Test
  void aFrameThatKeepsComingIsNotTimedOut() throws Exception {
    int timeoutMs = 400;
    try (ClientEndpoint ep = endpoint(new Echo(), NodeOptions.newBuilder().frameIdleTimeoutMs(timeoutMs));
        Conn slow = new Conn(ep.port())) {
      byte[] body = CODEC.encode(new Wire.QueryRequest(9, P0, CODEC.encode(9L)));
      byte[] frame = java.nio.ByteBuffer.allocate(4 + body.length).putInt(body.length).put(body).array();
      // One byte at a time, each well within the timeout, for longer than the timeout in all.
      slow.socket.setSoTimeout(timeoutMs / 4);
      for (int i = 0; i < frame.length - 1; i++) {
        slow.write(frame, i, 1);
        assertFalse(slow.closedByPeer(), "a frame still arriving is not closed");
      }
      slow.write(frame, frame.length - 1, 1);
      slow.socket.setSoTimeout(10_000);
      slow.receiveOk(9);
      assertEquals(0, ep.stats().frameTimeouts());
    }
  }

  @Test
  void aConnectionHeldBackByTheNodeIsNotTimedOutForItsHalfFrame() throws Exception {
    int timeoutMs = 300;
    CompletableFuture<Wire.ClientReply> first = new CompletableFuture<>();
    RequestHandler parking = new Echo() {
      @Override
      public CompletableFuture<Wire.ClientReply> query(Wire.QueryRequest q) {
        return q.requestId() == 1 ? first : super.query(q);
      }
    };
    try (ClientEndpoint ep = endpoint(parking,
        NodeOptions.newBuilder().frameIdleTimeoutMs(timeoutMs).maxInFlightPerConnection(1));
        Conn c = new Conn(ep.port())) {
      byte[] one = CODEC.encode(new Wire.QueryRequest(1, P0, CODEC.encode(1L)));
      byte[] two = CODEC.encode(new Wire.QueryRequest(2, P0, CODEC.encode(2L)));
      java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(8 + one.length + two.length);
      b.putInt(one.length).put(one).putInt(two.length).put(two);
      byte[] both = b.array();
      int cut = 4 + one.length + 4 + 2;
      // Request 1 (which the handler keeps unanswered, filling the bound of 1) and the start of
      // request 2, in one write: the node stops reading with part of a frame in hand.
      c.write(both, 0, cut);
      Waits.until(Duration.ofSeconds(10), () -> ep.stats().readPauses() == 1, () -> "the bound of 1 reached");
      assertFalse(c.closedByPeerWithin(4 * timeoutMs),
          "not read by the node's choice: its half frame is not the client's idleness");
      first.complete(new Wire.ClientReply(0, Status.OK, CODEC.encode(1L), null, 0));
      c.receiveOk(1);
      c.write(both, cut, both.length - cut);
      c.receiveOk(2);
      assertEquals(0, ep.stats().frameTimeouts());
    }
  }

  @Test
  void connectionsOverTheAddressCapAreRefusedWhileOpenOnesKeepWorking() throws Exception {
    try (ClientEndpoint ep = endpoint(new Echo(),
        NodeOptions.newBuilder().maxClientConnectionsPerAddress(2).maxClientConnections(3))) {
      List<Conn> open = new ArrayList<>();
      try {
        open.add(new Conn(ep.port(), "127.0.0.1"));
        open.add(new Conn(ep.port(), "127.0.0.1"));
        for (Conn c : open) {
          c.assertServed(1);
        }
        try (Conn over = new Conn(ep.port(), "127.0.0.1")) {
          Wire.ClientReply r = over.receive();
          assertNotNull(r, "a refused connection is told why");
          assertEquals(-1, r.requestId());
          assertEquals(Status.UNAVAILABLE, r.status());
          assertTrue(r.error().contains("from 127.0.0.1"), r.error());
          assertTrue(over.closedByPeer());
        }
        assertEquals(1, ep.stats().refusedAddressCap());
        // Another address still gets in, up to the node's cap.
        try (Conn other = new Conn(ep.port(), "127.0.0.2")) {
          other.assertServed(2);
          try (Conn overNode = new Conn(ep.port(), "127.0.0.3")) {
            Wire.ClientReply r = overNode.receive();
            assertNotNull(r);
            assertEquals(Status.UNAVAILABLE, r.status());
            assertTrue(r.error().contains("client connections open"), r.error());
            assertTrue(overNode.closedByPeer());
          }
          assertEquals(1, ep.stats().refusedNodeCap());
        }
        // The open connections were not disturbed.
        for (Conn c : open) {
          c.assertServed(3);
        }
        // A closed connection frees its place.
        open.remove(0).close();
        Waits.until(Duration.ofSeconds(10), () -> ep.stats().connections() == 1, () -> "a connection closed");
        try (Conn again = new Conn(ep.port(), "127.0.0.1")) {
          again.assertServed(4);
        }
        assertEquals(1, ep.stats().refusedAddressCap());
        assertEquals(1, ep.stats().refusedNodeCap());
      } finally {
        for (Conn c : open) {
          c.close();
        }
      }
    }
  }

  @Test
  void aConnectionPipeliningPastItsBoundIsHeldBackAndGetsEveryAnswer() throws Exception {
    int bound = 4;
    int requests = 5000;
    AtomicInteger concurrent = new AtomicInteger();
    AtomicInteger maxConcurrent = new AtomicInteger();
    ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();
    RequestHandler slow = new Echo() {
      @Override
      public CompletableFuture<Wire.ClientReply> multicast(Wire.ClientRequest r) {
        maxConcurrent.accumulateAndGet(concurrent.incrementAndGet(), Math::max);
        CompletableFuture<Wire.ClientReply> f = new CompletableFuture<>();
        later.schedule(() -> {
          concurrent.decrementAndGet();
          f.complete(new Wire.ClientReply(0, Status.OK, r.start().payload(), null, 1));
        }, 200, TimeUnit.MICROSECONDS);
        return f;
      }
    };
    byte[] payload = new byte[200];
    int frameBytes = 4 + CODEC.encode(request(0, payload)).length;
    try (ClientEndpoint ep = endpoint(slow, NodeOptions.newBuilder().maxInFlightPerConnection(bound));
        Conn c = new Conn(ep.port())) {
      AtomicReference<Throwable> writeError = new AtomicReference<>();
      Thread writer = new Thread(() -> {
        try {
          for (int i = 0; i < requests; i++) {
            byte[] b = CODEC.encode(request(i, payload));
            c.out.writeInt(b.length);
            c.out.write(b);
          }
          c.out.flush();
        } catch (IOException e) {
          writeError.set(e);
        }
      }, "pipelining-writer");
      writer.start();
      BitSet seen = new BitSet(requests);
      for (int i = 0; i < requests; i++) {
        Wire.ClientReply r = c.receive();
        assertNotNull(r, "the connection stays open; " + i + " answers so far");
        assertEquals(Status.OK, r.status(), r.error());
        assertFalse(seen.get((int) r.requestId()), "duplicate answer " + r.requestId());
        seen.set((int) r.requestId());
      }
      writer.join(10_000);
      assertEquals(null, writeError.get());
      assertEquals(requests, seen.cardinality());
      assertTrue(maxConcurrent.get() <= bound, "the handler works on at most " + bound + " of the connection's "
          + "requests at once, saw " + maxConcurrent.get());
      // What the endpoint holds for the connection: the bound, plus what one socket read (64 KiB at
      // most) brought in before it stopped reading; never the whole pipelined backlog.
      int held = ep.peakHeldOnOneConnection();
      int readMax = (64 << 10) / frameBytes + 1;
      assertTrue(held <= bound + readMax, "held " + held + ", at most " + (bound + readMax) + " expected");
      assertTrue(held < requests / 4, "held " + held);
      assertTrue(ep.stats().readPauses() > 0, "the bound fired");
      Waits.until(Duration.ofSeconds(10), () -> ep.stats().heldRequests() == 0, () -> "nothing held once answered");
    } finally {
      later.shutdownNow();
    }
  }

  @Test
  void pastThePendingBoundRequestsAreAnsweredBusy() throws Exception {
    List<CompletableFuture<Wire.ClientReply>> parked = new ArrayList<>();
    RequestHandler parking = new Echo() {
      @Override
      public synchronized CompletableFuture<Wire.ClientReply> query(Wire.QueryRequest q) {
        if (q.requestId() >= 100) {
          return super.query(q);
        }
        CompletableFuture<Wire.ClientReply> f = new CompletableFuture<>();
        parked.add(f);
        return f;
      }
    };
    try (ClientEndpoint ep = endpoint(parking, NodeOptions.newBuilder().maxPendingRequests(2));
        Conn a = new Conn(ep.port());
        Conn b = new Conn(ep.port())) {
      a.send(new Wire.QueryRequest(1, P0, CODEC.encode(1L)));
      b.send(new Wire.QueryRequest(2, P0, CODEC.encode(2L)));
      Waits.until(Duration.ofSeconds(10), () -> {
        synchronized (parking) {
          return parked.size() == 2;
        }
      }, () -> "two requests pending");
      b.send(new Wire.QueryRequest(100, P0, CODEC.encode(3L)));
      Wire.ClientReply busy = b.receive();
      assertNotNull(busy);
      assertEquals(100, busy.requestId());
      assertEquals(Status.UNAVAILABLE, busy.status());
      assertTrue(busy.error().startsWith("busy"), busy.error());
      assertEquals(1, ep.stats().busyReplies());
      synchronized (parking) {
        parked.forEach(f -> f.complete(new Wire.ClientReply(0, Status.OK, CODEC.encode(0L), null, 0)));
      }
      assertEquals(1, a.receive().requestId());
      assertEquals(2, b.receive().requestId());
      Waits.until(Duration.ofSeconds(10), () -> ep.stats().heldRequests() == 0, () -> "the parked ones answered");
      b.assertServed(101);
      a.assertServed(102);
      assertEquals(1, ep.stats().busyReplies());
    }
  }

  private static Wire.ClientRequest request(long id, byte[] payload) {
    return new Wire.ClientRequest(id, new Wire.Start(MsgId.valueOf(1, id, 0), new GroupId[] {P0}, P0, payload, 0));
  }
}
