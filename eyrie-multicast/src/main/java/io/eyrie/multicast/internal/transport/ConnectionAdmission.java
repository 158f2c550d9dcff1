package io.eyrie.multicast.internal.transport;

import io.eyrie.multicast.Codec;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.internal.Wire;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.AttributeKey;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * A client endpoint's connection caps, the node's and the remote address's: counts each accepted
 * connection against them, on the accepting thread and in the order of acceptance; one over
 * either cap is marked refused (answered UNAVAILABLE with request id -1 and closed as soon as it
 * is set up, {@link #refuse}). The open connections are not touched.
 */
final class ConnectionAdmission extends ChannelInboundHandlerAdapter {
  /** Why a connection was refused at accept; set here, answered by the connection's initializer. */
  static final AttributeKey<String> REFUSAL = AttributeKey.valueOf(ClientEndpoint.class, "refusal");

  private final ClientEndpoint.Limits limits;
  private final EndpointCounters counters;

  ConnectionAdmission(ClientEndpoint.Limits limits, EndpointCounters counters) {
    this.limits = limits;
    this.counters = counters;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof Channel ch) {
      String refusal = admit(ch);
      if (refusal != null) {
        ch.attr(REFUSAL).set(refusal);
      }
    }
    ctx.fireChannelRead(msg);
  }

  private String admit(Channel ch) {
    SocketAddress remote = ch.remoteAddress();
    InetAddress address = remote instanceof InetSocketAddress isa ? isa.getAddress() : null;
    if (counters.connections.incrementAndGet() > limits.maxConnections()) {
      counters.connections.decrementAndGet();
      counters.refusedNodeCap.incrementAndGet();
      counters.warnings.warn("connection cap", "{}: refused, the node has {} client connections open (cap {})",
          remote, limits.maxConnections(), limits.maxConnections());
      return "the node has " + limits.maxConnections() + " client connections open";
    }
    if (address != null) {
      boolean[] over = new boolean[1];
      counters.perAddress.compute(address, (a, n) -> {
        int open = n == null ? 0 : n;
        if (open >= limits.maxConnectionsPerAddress()) {
          over[0] = true;
          return n;
        }
        return open + 1;
      });
      if (over[0]) {
        counters.connections.decrementAndGet();
        counters.refusedAddressCap.incrementAndGet();
        counters.warnings.warn("address cap", "{}: refused, {} client connections from that address are open (cap {})",
            remote, limits.maxConnectionsPerAddress(), limits.maxConnectionsPerAddress());
        return "the node has " + limits.maxConnectionsPerAddress() + " client connections open from "
            + address.getHostAddress();
      }
    }
    ch.closeFuture().addListener(f -> {
      counters.connections.decrementAndGet();
      if (address != null) {
        counters.perAddress.computeIfPresent(address, (a, n) -> n <= 1 ? null : n - 1);
      }
    });
    return null;
  }

  /** Answers a refused connection once, without reading it, and closes it. */
  static void refuse(Channel ch, Codec codec, String why) {
    ch.config().setAutoRead(false);
    ch.writeAndFlush(frame(codec, new Wire.ClientReply(-1, Status.UNAVAILABLE, null, why, 0)))
        .addListener(ChannelFutureListener.CLOSE);
  }

  /** A reply as one length-prefixed frame, for writing below the pipeline's framing. */
  static ByteBuf frame(Codec codec, Wire.ClientReply reply) {
    byte[] body = codec.encode(reply);
    return Unpooled.buffer(4 + body.length).writeInt(body.length).writeBytes(body);
  }
}
