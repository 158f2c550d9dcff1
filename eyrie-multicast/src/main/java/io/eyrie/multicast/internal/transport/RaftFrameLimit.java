package io.eyrie.multicast.internal.transport;

import org.apache.ratis.thirdparty.io.netty.buffer.ByteBuf;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelHandlerContext;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelInboundHandlerAdapter;
import org.apache.ratis.thirdparty.io.netty.util.ReferenceCountUtil;
import org.slf4j.LoggerFactory;

/**
 * The Raft port's frame limit (issue 28): Ratis's Netty server reads varint32-prefixed protobuf
 * frames with no maximum, so a peer that declares a 2 GiB frame makes it buffer up to that. This
 * handler sits in front of Ratis's decoder on every accepted connection (after TLS when there is
 * TLS), follows the frame boundaries as the bytes pass through unchanged, and closes a connection
 * whose frame declares more than {@link #MAX_FRAME_BYTES} or whose length prefix is malformed.
 *
 * <p>The bound ({@link #forClientFrames}, 64 MiB with the default client frames) is far above what nodes legitimately send: snapshot chunks are at most 16 MiB (Ratis's
 * default), appendEntries carry at most the appender's buffer (4 MiB) or one entry, a start entry
 * holds about {@code Submitter.MAX_BATCH_PAYLOAD_BYTES} plus one start (a client frame, 4 MiB at
 * most), and a channel batch about 1 MiB plus one item of at most 3 MiB.
 */
final class RaftFrameLimit extends ChannelInboundHandlerAdapter {
  /** The largest frame a Raft port reads with the client port's default frame limit. */
  static final long MAX_FRAME_BYTES = 64L << 20;
  /** The {@code Parameters} key of a node's limit ({@link #forClientFrames}). */
  static final String KEY = "eyrie.raft.frame-limit";

  /**
   * The Raft port's limit for a node whose client port takes frames of up to {@code
   * clientFrameBytes}: a start entry holds about 1 MiB plus one start, and appendEntries the
   * appender's buffer (4 MiB) plus one entry, so the limit stays well above them however large the
   * client frames are allowed to be (an operator's {@code maxFrameBytes}).
   */
  static long forClientFrames(int clientFrameBytes) {
    return Math.max(MAX_FRAME_BYTES, 2L * clientFrameBytes + (32L << 20));
  }

  /** The limit in Ratis parameters, or the default if they carry none (a Ratis client's own). */
  static long of(org.apache.ratis.conf.Parameters p) {
    Long v = p == null ? null : p.get(KEY, Long.class);
    return v == null ? MAX_FRAME_BYTES : v;
  }
  private static final RateLimitedWarnings WARNINGS =
      new RateLimitedWarnings(LoggerFactory.getLogger(RaftFrameLimit.class));

  private final long max;
  private final RaftPortCounters counters;
  /** Bytes of the current frame's body still to pass; 0 while a length prefix is being read. */
  private long remaining;
  private long length;
  private int shift;
  private boolean closed;

  RaftFrameLimit(long max, RaftPortCounters counters) {
    this.max = max;
    this.counters = counters;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
    if (closed) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (msg instanceof ByteBuf buf) {
      String refused = scan(buf);
      if (refused != null) {
        closed = true;
        counters.frameRefusals.increment();
        buf.release();
        WARNINGS.warn("raft-frame", "Raft port {}: closing the connection from {}: {}", ctx.channel().localAddress(),
            ctx.channel().remoteAddress(), refused);
        ctx.close();
        return;
      }
    }
    ctx.fireChannelRead(msg);
  }

  /** Follows the frames in {@code buf} without consuming it; returns why to refuse, or null. */
  private String scan(ByteBuf buf) {
    int i = buf.readerIndex();
    int end = buf.writerIndex();
    while (i < end) {
      if (remaining > 0) {
        long skip = Math.min(remaining, end - i);
        i += (int) skip;
        remaining -= skip;
        continue;
      }
      byte b = buf.getByte(i++);
      length |= (long) (b & 0x7f) << shift;
      if ((b & 0x80) != 0) {
        shift += 7;
        if (shift > 28) {
          return "a frame length prefix longer than 5 bytes";
        }
        continue;
      }
      if (length > max) {
        return "a frame of " + length + " bytes declared, more than the limit of " + max;
      }
      remaining = length;
      length = 0;
      shift = 0;
    }
    return null;
  }
}
