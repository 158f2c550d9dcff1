package io.eyrie.multicast.internal.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
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
import io.eyrie.multicast.testing.RawConnection;
import io.eyrie.multicast.testing.Waits;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A real endpoint on an ephemeral port: garbage, oversized and unregistered frames get an error
 * reply or a closed connection while a pipelining good client on the same endpoint keeps getting
 * correct answers.
 */
@Timeout(60)
class ClientEndpointTest {
  private static final Codec CODEC = new Codec(CodecRegistry.empty());
  private static final int MAX = 64 << 10;
  private static final GroupId P0 = GroupId.valueOf("p0");

  /** A class that no registry knows. */
  static final class Intruder {
    String what = "not registered";
  }

  /** Echoes the payload (or query) back as the body, after a small random delay, so replies overtake each other. */
  static final class Echo implements RequestHandler {
    @Override
    public CompletableFuture<Wire.ClientReply> multicast(Wire.ClientRequest r) {
      if (r.start() == null) {
        return CompletableFuture.completedFuture(new Wire.ClientReply(0, Status.BAD_REQUEST, null, "no start", 0));
      }
      Executor later = CompletableFuture.delayedExecutor(ThreadLocalRandom.current().nextInt(3), TimeUnit.MILLISECONDS);
      return CompletableFuture.supplyAsync(() -> new Wire.ClientReply(0, Status.OK, r.start().payload(), null, 1),
          later);
    }

    @Override
    public CompletableFuture<Wire.ClientReply> query(Wire.QueryRequest q) {
      return CompletableFuture.completedFuture(new Wire.ClientReply(0, Status.OK, q.query(), null, 1));
    }
  }

  @Test
  void badConnectionsDoNotDisturbAGoodOne() throws Exception {
    try (ClientEndpoint ep = ClientEndpoint.start("127.0.0.1", 0, CODEC, new Echo(), MAX)) {
      assertTrue(ep.port() > 0);
      AtomicBoolean stop = new AtomicBoolean();
      AtomicInteger rounds = new AtomicInteger();
      List<Throwable> errors = new ArrayList<>();
      Thread good = new Thread(() -> {
        try (RawConnection c = new RawConnection("127.0.0.1", ep.port(), CODEC)) {
          long next = 0;
          while (!stop.get()) {
            // Pipeline a batch; replies may come back in any order.
            Set<Long> want = new HashSet<>();
            for (int i = 0; i < 8; i++) {
              long id = next++;
              want.add(id);
              if (i % 4 == 3) {
                c.send(new Wire.QueryRequest(id, P0, CODEC.encode(id)));
              } else {
                c.send(new Wire.ClientRequest(id, new Wire.Start(MsgId.valueOf(1, id, 0), new GroupId[] {P0}, P0,
                    CODEC.encode(id), 0)));
              }
            }
            while (!want.isEmpty()) {
              Wire.ClientReply r = (Wire.ClientReply) c.receive();
              assertNotNull(r, "the good connection stays open");
              assertEquals(Status.OK, r.status(), r.error());
              assertTrue(want.remove(r.requestId()), "unexpected or duplicate reply " + r.requestId());
              assertEquals(r.requestId(), CODEC.decode(r.body()), "the reply belongs to its request");
            }
            rounds.incrementAndGet();
          }
        } catch (Throwable e) {
          synchronized (errors) {
            errors.add(e);
          }
        }
      }, "good-client");
      good.start();
      Waits.until(Duration.ofSeconds(10), () -> rounds.get() > 5 || !errors.isEmpty(), () -> "good client started");

      Random rnd = new Random(3);
      for (int round = 0; round < 5; round++) {
        try (RawConnection raw = new RawConnection("127.0.0.1", ep.port(), CODEC)) {
          byte[] junk = new byte[200];
          rnd.nextBytes(junk);
          junk[0] = (byte) 0x7f;
          raw.sendRaw(junk);
          assertErrorOrClosed(raw, "malformed frame");
        }
        try (RawConnection raw = new RawConnection("127.0.0.1", ep.port(), CODEC)) {
          raw.sendBytes(new byte[] {0, 0x10, 0, 0});
          raw.sendBytes(new byte[4096]);
          assertErrorOrClosed(raw, "frame exceeds " + MAX + " bytes");
        }
        try (RawConnection raw = new RawConnection("127.0.0.1", ep.port(), CODEC)) {
          Kryo loose = new Kryo();
          loose.setRegistrationRequired(false);
          Output out = new Output(256, -1);
          loose.writeClassAndObject(out, new Intruder());
          raw.sendRaw(out.toBytes());
          assertErrorOrClosed(raw, "malformed frame");
        }
        try (RawConnection raw = new RawConnection("127.0.0.1", ep.port(), CODEC)) {
          // Wrong type and incomplete content: answered, and the connection stays usable.
          raw.send("a string is not a request");
          Wire.ClientReply r = (Wire.ClientReply) raw.receive();
          assertEquals(-1, r.requestId());
          assertEquals(Status.BAD_REQUEST, r.status());
          raw.send(new Wire.ClientRequest(77, null));
          r = (Wire.ClientReply) raw.receive();
          assertEquals(77, r.requestId());
          assertNotEquals(Status.OK, r.status());
          raw.send(new Wire.QueryRequest(78, P0, CODEC.encode("q")));
          r = (Wire.ClientReply) raw.receive();
          assertEquals(78, r.requestId());
          assertEquals("q", CODEC.decode(r.body()));
        }
        try (RawConnection raw = new RawConnection("127.0.0.1", ep.port(), CODEC)) {
          // Half a frame, then the client vanishes.
          raw.sendBytes(new byte[] {0, 0, 0, 100, 1, 2, 3});
        }
      }
      int before = rounds.get();
      Waits.until(Duration.ofSeconds(20), () -> rounds.get() > before + 20 || !errors.isEmpty(),
          () -> "the good client keeps being served");
      stop.set(true);
      good.join(TimeUnit.SECONDS.toMillis(30));
      assertTrue(errors.isEmpty(), "good client failed: " + errors);
    }
  }

  @Test
  void bindsTheGivenPortAndReleasesItOnClose() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    ClientEndpoint ep = ClientEndpoint.start("127.0.0.1", port, CODEC, new Echo(), MAX);
    assertEquals(port, ep.port());
    assertThrows(IOException.class, () -> ClientEndpoint.start("127.0.0.1", port, CODEC, new Echo(), MAX));
    try (RawConnection raw = new RawConnection("127.0.0.1", port, CODEC)) {
      raw.send(new Wire.QueryRequest(1, P0, CODEC.encode(5L)));
      assertEquals(5L, CODEC.decode(((Wire.ClientReply) raw.receive()).body()));
      ep.close();
      assertTrue(raw.closedByPeer(), "closing the endpoint closes its connections");
    }
    ep.close(); // idempotent
    try (ClientEndpoint again = ClientEndpoint.start("127.0.0.1", port, CODEC, new Echo(), MAX)) {
      assertEquals(port, again.port());
    }
  }

  private static void assertErrorOrClosed(RawConnection raw, String errorPrefix) throws IOException {
    Wire.ClientReply r = (Wire.ClientReply) raw.receiveOrReset();
    if (r != null) {
      assertEquals(-1, r.requestId());
      assertEquals(Status.BAD_REQUEST, r.status(), "error reply expected, got " + r);
      assertTrue(r.error().startsWith(errorPrefix), r.error());
      assertTrue(raw.closedByPeer(), "the endpoint closes a connection whose framing it cannot trust");
    }
  }
}
