package io.eyrie.multicast.internal.transport;

import io.eyrie.multicast.NodeStats;
import java.net.InetAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.LoggerFactory;

/**
 * What a {@link ClientEndpoint}'s limits did, and what the endpoint holds now (open connections,
 * per address, pending and held requests); shared by the endpoint's connections, with the
 * warnings of its limits (rate limited, logged as the endpoint's).
 */
final class EndpointCounters {
  final AtomicInteger connections = new AtomicInteger();
  final ConcurrentHashMap<InetAddress, Integer> perAddress = new ConcurrentHashMap<>();
  final AtomicInteger pending = new AtomicInteger();
  final AtomicInteger held = new AtomicInteger();
  final AtomicInteger peakHeldOnOneConnection = new AtomicInteger();
  final AtomicLong refusedNodeCap = new AtomicLong();
  final AtomicLong refusedAddressCap = new AtomicLong();
  final AtomicLong frameTimeouts = new AtomicLong();
  final AtomicLong oversizedFrames = new AtomicLong();
  final AtomicLong malformedFrames = new AtomicLong();
  final AtomicLong readPauses = new AtomicLong();
  final AtomicLong busyReplies = new AtomicLong();
  final AtomicLong handshakeTimeouts = new AtomicLong();
  final AtomicLong handshakeFailures = new AtomicLong();
  final AtomicLong forbidden = new AtomicLong();
  final RateLimitedWarnings warnings = new RateLimitedWarnings(LoggerFactory.getLogger(ClientEndpoint.class));

  NodeStats.Endpoint snapshot() {
    return new NodeStats.Endpoint(connections.get(), held.get(), refusedNodeCap.get(), refusedAddressCap.get(),
        frameTimeouts.get(), oversizedFrames.get(), malformedFrames.get(), readPauses.get(), busyReplies.get(),
        handshakeTimeouts.get(), handshakeFailures.get(), forbidden.get());
  }
}
