package io.eyrie.multicast.testing;

import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.api.AsyncApi;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;

/**
 * A stand-in for Ratis's {@link RaftClient} in tests of what writes through it: its async sends
 * are captured and left pending, for the test to answer with {@link #reply}. Only
 * {@code async().send(Message)} and {@code close()} work; anything else throws.
 */
public final class FakeRaftClient {
  private FakeRaftClient() {}

  /**
   * Returns a client whose async sends hand the message's bytes to {@code sent} and the pending
   * reply to {@code pending}.
   *
   * @param sent gets each sent message's content
   * @param pending gets each send's reply future, not completed
   * @return the client
   */
  public static RaftClient capturing(Consumer<byte[]> sent, Consumer<CompletableFuture<RaftClientReply>> pending) {
    ClassLoader loader = FakeRaftClient.class.getClassLoader();
    AsyncApi async = (AsyncApi) Proxy.newProxyInstance(loader, new Class<?>[] {AsyncApi.class},
        (p, m, args) -> {
          if (m.getName().equals("send") && args != null && args.length == 1 && args[0] instanceof Message msg) {
            sent.accept(msg.getContent().toByteArray());
            CompletableFuture<RaftClientReply> f = new CompletableFuture<>();
            pending.accept(f);
            return f;
          }
          throw new UnsupportedOperationException(m.getName());
        });
    return (RaftClient) Proxy.newProxyInstance(loader, new Class<?>[] {RaftClient.class},
        (p, m, args) -> switch (m.getName()) {
          case "async" -> async;
          case "close" -> null;
          case "hashCode" -> System.identityHashCode(p);
          case "equals" -> p == args[0];
          case "toString" -> "fake client";
          default -> throw new UnsupportedOperationException(m.getName());
        });
  }

  /**
   * A successful reply whose message is the given longs, in order (what a group's state machine
   * answers a channel batch or a start batch with).
   *
   * @param results the longs
   * @return the reply
   */
  public static RaftClientReply reply(long... results) {
    ByteBuffer b = ByteBuffer.allocate(8 * results.length);
    for (long r : results) {
      b.putLong(r);
    }
    return RaftClientReply.newBuilder().setClientId(ClientId.randomId()).setServerId(RaftPeerId.valueOf("n1"))
        .setGroupId(RaftGroupId.randomId()).setCallId(1).setSuccess(true).setMessage(Message.valueOf(b.flip()))
        .build();
  }
}
