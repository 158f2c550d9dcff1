package io.eyrie.multicast.internal.replication;

import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.Wire;
import io.eyrie.multicast.internal.state.GroupState;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The reply gate's local waits at one replica (rule 11): messages a request on this node waits to
 * see started at the replica, each completed with true from the apply thread once the applied
 * state shows it; and the replica's answer to a {@link Wire.StartedQuery}. Not thread-safe: the
 * {@link GroupStateMachine}'s lock guards it, and every method is called holding it.
 */
final class StartWaits {
  private final Map<MsgId, CompletableFuture<Boolean>> waits = new HashMap<>();

  /** Whether no request waits. */
  boolean isEmpty() {
    return waits.isEmpty();
  }

  /**
   * A future completed with true once {@code state} shows that the message started, at once if
   * it already does; one per message, replaced once its caller gave up on it.
   */
  CompletableFuture<Boolean> whenStarted(GroupState state, MsgId id) {
    if (state.started(id)) {
      return CompletableFuture.completedFuture(true);
    }
    CompletableFuture<Boolean> f = waits.get(id);
    if (f == null || f.isDone()) {
      f = new CompletableFuture<>();
      waits.put(id, f);
    }
    return f;
  }

  /** The waits whose messages started in {@code state} (removed), and drops those their callers gave up on. */
  List<CompletableFuture<Boolean>> takeStarted(GroupState state) {
    List<CompletableFuture<Boolean>> out = new ArrayList<>();
    for (var it = waits.entrySet().iterator(); it.hasNext(); ) {
      var w = it.next();
      if (w.getValue().isDone()) {
        it.remove();
      } else if (state.started(w.getKey())) {
        out.add(w.getValue());
        it.remove();
      }
    }
    return out;
  }

  /** The ids of a StartedQuery's messages that started in {@code state} (rule 11). */
  static MsgId[] started(GroupState state, Wire.StartedQuery q) {
    if (q.ids() == null) {
      return new MsgId[0];
    }
    List<MsgId> out = new ArrayList<>();
    for (MsgId id : q.ids()) {
      if (id != null && state.started(id)) {
        out.add(id);
      }
    }
    return out.toArray(new MsgId[0]);
  }
}
