package io.eyrie.multicast.internal.transport;

import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.ratis.thirdparty.io.netty.channel.Channel;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelFuture;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelPromise;
import org.apache.ratis.thirdparty.io.netty.channel.EventLoop;
import org.apache.ratis.thirdparty.io.netty.channel.EventLoopGroup;
import org.apache.ratis.thirdparty.io.netty.util.concurrent.AbstractEventExecutorGroup;
import org.apache.ratis.thirdparty.io.netty.util.concurrent.EventExecutor;
import org.apache.ratis.thirdparty.io.netty.util.concurrent.Future;

/**
 * An event-loop group of Ratis's shaded Netty that runs a hook on each channel before the channel
 * registers, and otherwise is the group it wraps. Netty's bootstraps add their handlers to a
 * channel before registering it, and its channel initializer adds the protocol's handlers after
 * registration: a handler the hook puts first in the pipeline therefore stays first. {@link
 * RaftTls} puts the TLS handler there in the channels of Ratis's Netty RPC, whose pipelines
 * Ratis 3.3.0 builds itself.
 */
final class HookedEventLoopGroup extends AbstractEventExecutorGroup implements EventLoopGroup {
  private final EventLoopGroup group;
  private final Consumer<Channel> beforeRegister;

  HookedEventLoopGroup(EventLoopGroup group, Consumer<Channel> beforeRegister) {
    this.group = group;
    this.beforeRegister = beforeRegister;
  }

  @Override
  public EventLoop next() {
    return group.next();
  }

  @Override
  public Iterator<EventExecutor> iterator() {
    return group.iterator();
  }

  @Override
  public ChannelFuture register(Channel channel) {
    beforeRegister.accept(channel);
    return group.register(channel);
  }

  @Override
  public ChannelFuture register(ChannelPromise promise) {
    beforeRegister.accept(promise.channel());
    return group.register(promise);
  }

  @Deprecated
  @Override
  public ChannelFuture register(Channel channel, ChannelPromise promise) {
    beforeRegister.accept(channel);
    return group.register(channel, promise);
  }

  @Override
  public boolean isShuttingDown() {
    return group.isShuttingDown();
  }

  @Override
  public Future<?> shutdownGracefully(long quietPeriod, long timeout, TimeUnit unit) {
    return group.shutdownGracefully(quietPeriod, timeout, unit);
  }

  @Override
  public Future<?> terminationFuture() {
    return group.terminationFuture();
  }

  @Deprecated
  @Override
  public void shutdown() {
    group.shutdown();
  }

  @Override
  public boolean isShutdown() {
    return group.isShutdown();
  }

  @Override
  public boolean isTerminated() {
    return group.isTerminated();
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    return group.awaitTermination(timeout, unit);
  }
}
