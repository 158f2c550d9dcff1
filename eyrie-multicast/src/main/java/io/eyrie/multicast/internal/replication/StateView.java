package io.eyrie.multicast.internal.replication;

import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.Wire.Component;
import io.eyrie.multicast.internal.state.GroupState;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What the {@link Exchange} reads of a group's applied state: either a state whose lock the caller
 * holds ({@link Exchange#viewOf}), or a replica's current state under the replica's lock, taken
 * for each read and once around a whole step ({@link GroupStateMachine#view}); the maps and sets
 * read under the lock are copies, since the apply thread changes them once it is released.
 */
final class StateView implements Exchange.View {
  private final Supplier<GroupState> state;
  /** The replica's lock, or null when the caller holds whatever lock the state needs. */
  private final ReentrantLock lock;

  private StateView(Supplier<GroupState> state, ReentrantLock lock) {
    this.state = state;
    this.lock = lock;
  }

  /** A view of a state whose lock the caller holds. */
  static StateView of(GroupState s) {
    return new StateView(() -> s, null);
  }

  /** A view of a replica's current state, each read under the replica's (reentrant) lock. */
  static StateView locked(Supplier<GroupState> current, ReentrantLock lock) {
    return new StateView(current, lock);
  }

  private <T> T read(Function<GroupState, T> f) {
    return locked(() -> f.apply(state.get()));
  }

  @Override
  public Component component(MsgId id) {
    return read(s -> s.component(id));
  }

  @Override
  public SortedMap<MsgId, GroupId[]> undecided() {
    return read(GroupState::undecided);
  }

  @Override
  public GroupId[] undecided(MsgId id) {
    return read(s -> s.undecidedDests(id));
  }

  @Override
  public Map<GroupId, Long> loggedComponents(MsgId id) {
    return read(s -> lock == null ? s.loggedComponents(id) : Map.copyOf(s.loggedComponents(id)));
  }

  @Override
  public Set<GroupId> forwardedTo(MsgId id) {
    return read(s -> lock == null ? s.forwardedTo(id) : Set.copyOf(s.forwardedTo(id)));
  }

  @Override
  public <T> T locked(Supplier<T> body) {
    if (lock == null) {
      return body.get();
    }
    lock.lock();
    try {
      return body.get();
    } finally {
      lock.unlock();
    }
  }
}
