package io.eyrie.multicast.testing;

import io.eyrie.multicast.Deliverer;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.ExecutionContext;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A test application that records, as its replicated state, the payload (a Long token) of every
 * message delivered, in order, and replies with the delivery's position.
 */
public final class RecordingDeliverer implements Deliverer {
  private final ArrayList<Long> delivered = new ArrayList<>();

  @Override
  public Execution deliver(ExecutionContext ctx) {
    Object p = ctx.payload();
    if (!(p instanceof Long token)) {
      return Execution.error("expected a Long token, got " + (p == null ? null : p.getClass().getSimpleName()));
    }
    delivered.add(token);
    return Execution.reply((long) delivered.size());
  }

  /** Returns a copy of the delivered tokens, in delivery order. */
  public List<Long> delivered() {
    return new ArrayList<>(delivered);
  }

  /** Returns how many tokens were delivered. */
  public int size() {
    return delivered.size();
  }

  @Override
  public byte[] snapshot() {
    ByteBuffer b = ByteBuffer.allocate(8 * delivered.size());
    delivered.forEach(b::putLong);
    return b.array();
  }

  @Override
  public void restore(byte[] state) {
    delivered.clear();
    ByteBuffer b = ByteBuffer.wrap(state);
    while (b.remaining() >= 8) {
      delivered.add(b.getLong());
    }
  }
}
