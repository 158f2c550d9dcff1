package io.eyrie.multicast.internal.transport;

import io.eyrie.multicast.Identity;
import io.eyrie.multicast.Status;
import io.eyrie.multicast.internal.Wire;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.EncoderException;
import io.netty.handler.codec.TooLongFrameException;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A connection's requests: turns decoded frames into handler calls and every failure into a reply, and keeps the
 * connection's in-flight bound. One per connection; its fields are the event loop's.
 */
final class RequestDispatcher extends SimpleChannelInboundHandler<Object> {
  private static final Logger LOG = LoggerFactory.getLogger(ClientEndpoint.class);

  private final RequestHandler handler;
  private final ClientEndpoint.Limits limits;
  private final EndpointCounters counters;
  /** Set once the connection is condemned; later frames and errors are ignored. */
  private boolean closing;
  /** Requests handed to the handler and not answered yet. */
  private int inFlight;
  /** Requests read while {@link #inFlight} was at the bound, in arrival order. */
  private final ArrayDeque<Object> waiting = new ArrayDeque<>();
  /** True while the connection is not read because of the in-flight bound. */
  private boolean paused;

  RequestDispatcher(RequestHandler handler, ClientEndpoint.Limits limits, EndpointCounters counters) {
    this.handler = handler;
    this.limits = limits;
    this.counters = counters;
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, Object msg) {
    if (closing) {
      return;
    }
    if (isRequest(msg) && (inFlight >= limits.maxInFlightPerConnection() || !waiting.isEmpty())) {
      waiting.add(msg);
      held(1);
      pause(ctx);
      return;
    }
    handle(ctx, msg);
  }

  private static boolean isRequest(Object msg) {
    return msg instanceof Wire.ClientRequest || msg instanceof Wire.QueryRequest || msg instanceof Wire.ViewRequest;
  }

  private void handle(ChannelHandlerContext ctx, Object msg) {
    Identity peer = ctx.channel().attr(TlsGate.PEER).get();
    if (msg instanceof Wire.ClientRequest r) {
      dispatch(ctx, r.requestId(), true, () -> handler.multicast(r, peer));
    } else if (msg instanceof Wire.QueryRequest q) {
      dispatch(ctx, q.requestId(), true, () -> handler.query(q, peer));
    } else if (msg instanceof Wire.ViewRequest v) {
      dispatch(ctx, v.requestId(), false, () -> handler.view(v));
    } else {
      String type = msg == FrameCodec.NULL_FRAME ? "null" : msg.getClass().getName();
      LOG.debug("{}: unexpected frame type {}", ctx.channel().remoteAddress(), type);
      write(ctx, new Wire.ClientReply(-1, Status.BAD_REQUEST, null, "unexpected frame type " + type, 0));
    }
  }

  /** Stops reading the connection until its in-flight requests fall below the bound. */
  private void pause(ChannelHandlerContext ctx) {
    if (paused) {
      return;
    }
    paused = true;
    counters.readPauses.incrementAndGet();
    counters.warnings.warn("in-flight bound", "{}: {} requests in flight, not reading the connection until one is answered",
        ctx.channel().remoteAddress(), inFlight);
    updateAutoRead(ctx);
  }

  /** Counts requests held (being worked on or waiting) by this connection. */
  private void held(int delta) {
    counters.held.addAndGet(delta);
    if (delta > 0) {
      int mine = inFlight + waiting.size();
      counters.peakHeldOnOneConnection.accumulateAndGet(mine, Math::max);
    }
  }

  /** A request of this connection was answered: take the next waiting ones, and read again once none wait. */
  private void answered(ChannelHandlerContext ctx) {
    inFlight--;
    held(-1);
    while (!closing && !waiting.isEmpty() && inFlight < limits.maxInFlightPerConnection()) {
      Object next = waiting.poll();
      held(-1);
      handle(ctx, next);
    }
    if (paused && waiting.isEmpty() && inFlight < limits.maxInFlightPerConnection()) {
      paused = false;
      updateAutoRead(ctx);
    }
  }

  /** Reads the connection only while it is not condemned, not paused and its replies can be written. */
  private void updateAutoRead(ChannelHandlerContext ctx) {
    boolean read = !closing && !paused && ctx.channel().isWritable();
    if (read != ctx.channel().config().isAutoRead()) {
      if (read) {
        FrameCodec.FrameDecoder d = ctx.pipeline().get(FrameCodec.FrameDecoder.class);
        if (d != null) {
          d.readingResumed();
        }
      }
      ctx.channel().config().setAutoRead(read);
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    // Waiting requests were never handed to the handler: drop them. Those in flight are
    // released as their answers come.
    held(-waiting.size());
    waiting.clear();
    super.channelInactive(ctx);
  }

  private void dispatch(ChannelHandlerContext ctx, long requestId, boolean pending,
      Supplier<CompletableFuture<Wire.ClientReply>> call) {
    if (pending && counters.pending.incrementAndGet() > limits.maxPendingRequests()) {
      counters.pending.decrementAndGet();
      counters.busyReplies.incrementAndGet();
      counters.warnings.warn("pending bound", "{}: busy, request {} refused: the node has {} requests pending (bound {})",
          ctx.channel().remoteAddress(), requestId, limits.maxPendingRequests(), limits.maxPendingRequests());
      write(ctx, new Wire.ClientReply(requestId, Status.UNAVAILABLE, null,
          "busy: the node has " + limits.maxPendingRequests() + " requests pending; try again later", 0));
      return;
    }
    inFlight++;
    held(1);
    if (inFlight >= limits.maxInFlightPerConnection()) {
      pause(ctx);
    }
    CompletableFuture<Wire.ClientReply> f;
    try {
      f = call.get();
    } catch (RuntimeException e) {
      // The handler promises not to throw; if it does, the client still deserves an answer.
      LOG.warn("request handler threw for request {}", requestId, e);
      f = CompletableFuture.failedFuture(e);
    }
    if (f == null) {
      f = CompletableFuture.failedFuture(new IllegalStateException("the request handler returned no future"));
    }
    // Completes on whatever thread the handler finishes on; Netty hands the write to the event loop.
    f.whenComplete((reply, err) -> {
      if (pending) {
        counters.pending.decrementAndGet();
      }
      if (reply != null && reply.status() == Status.FORBIDDEN) {
        counters.forbidden.incrementAndGet();
        counters.warnings.warn("forbidden", "{} {}: request {} refused: {}", ctx.channel().remoteAddress(),
            ctx.channel().attr(TlsGate.PEER).get(), requestId, reply.error());
      }
      write(ctx, answer(requestId, reply, err));
      if (ctx.executor().inEventLoop()) {
        answered(ctx);
      } else if (!ctx.executor().isShuttingDown()) {
        try {
          ctx.executor().execute(() -> answered(ctx));
        } catch (java.util.concurrent.RejectedExecutionException e) {
          counters.held.decrementAndGet(); // the endpoint is closing
        }
      } else {
        counters.held.decrementAndGet();
      }
    });
  }

  private static Wire.ClientReply answer(long requestId, Wire.ClientReply reply, Throwable err) {
    if (err != null) {
      Throwable cause = unwrap(err);
      return new Wire.ClientReply(requestId, Status.ERROR, null, String.valueOf(cause.getMessage()), 0);
    }
    if (reply == null) {
      return new Wire.ClientReply(requestId, Status.ERROR, null, "the request handler returned no reply", 0);
    }
    return new Wire.ClientReply(requestId, reply.status(), reply.body(), reply.error(), reply.leaderHint());
  }

  private static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  private void write(ChannelHandlerContext ctx, Wire.ClientReply reply) {
    if (!ctx.channel().isActive() || ctx.executor().isShuttingDown()) {
      // Handlers answer pending requests when the node shuts down; a write to a dead event
      // loop would only log an error about a listener it cannot notify.
      LOG.debug("{}: connection gone, dropping reply {}", ctx.channel().remoteAddress(), reply.requestId());
      return;
    }
    ctx.writeAndFlush(reply).addListener((ChannelFutureListener) f -> {
      if (f.isSuccess()) {
        return;
      }
      if (f.cause() instanceof EncoderException && f.channel().isActive() && reply.body() != null) {
        // Without some answer the client would wait for its attempt timeout and resend in vain.
        LOG.warn("cannot encode the reply to request {}: {}", reply.requestId(), f.cause().toString());
        ctx.writeAndFlush(new Wire.ClientReply(reply.requestId(), Status.ERROR, null,
            "cannot encode the reply: " + f.cause().getMessage(), reply.leaderHint()));
      } else {
        LOG.debug("{}: reply {} not written: {}", f.channel().remoteAddress(), reply.requestId(), f.cause().toString());
      }
    });
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (closing) {
      return;
    }
    if (cause instanceof TooLongFrameException) {
      counters.oversizedFrames.incrementAndGet();
      reject(ctx, "frame limit", "frame exceeds " + limits.maxFrameBytes() + " bytes");
    } else if (cause instanceof FrameCodec.FrameIdleException) {
      counters.frameTimeouts.incrementAndGet();
      reject(ctx, "frame idle timeout", cause.getMessage());
    } else if (cause instanceof FrameCodec.MalformedFrameException) {
      counters.malformedFrames.incrementAndGet();
      reject(ctx, "malformed frame", cause.getMessage());
    } else if (cause instanceof DecoderException) {
      counters.malformedFrames.incrementAndGet();
      Throwable c = cause.getCause() != null ? cause.getCause() : cause;
      reject(ctx, "malformed frame", "malformed frame: " + c.getMessage());
    } else {
      // Resets and other I/O trouble: nothing to answer, the connection is gone or useless.
      LOG.debug("{}: closing after {}", ctx.channel().remoteAddress(), cause.toString());
      closing = true;
      ctx.close();
    }
  }

  /** Answers once and closes: after a bad frame the byte stream cannot be resynchronized. */
  private void reject(ChannelHandlerContext ctx, String limit, String why) {
    counters.warnings.warn(limit, "{}: {}; closing the connection", ctx.channel().remoteAddress(), why);
    closing = true;
    ctx.channel().config().setAutoRead(false);
    ctx.writeAndFlush(new Wire.ClientReply(-1, Status.BAD_REQUEST, null, why, 0))
        .addListener(ChannelFutureListener.CLOSE);
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    // A client that sends faster than it reads replies stops being read until it catches up,
    // so its backlog stays in its own socket rather than in this node's memory.
    updateAutoRead(ctx);
    ctx.fireChannelWritabilityChanged();
  }
}
