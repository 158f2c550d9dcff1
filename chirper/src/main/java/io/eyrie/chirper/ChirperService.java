package io.eyrie.chirper;

import io.eyrie.core.Service;
import io.eyrie.oracle.OracleStateMachine;
import java.util.function.Supplier;

/**
 * Chirper as one service descriptor: its types, {@link ChirperServer} and {@link ChirperOracle}.
 * {@code chirper node} hosts it, and so does {@code bin/eyrie node --service
 * io.eyrie.chirper.ChirperService} with Chirper's jar on the class path.
 */
public final class ChirperService implements Supplier<Service> {

  /** For the node launcher. */
  public ChirperService() {}

  /**
   * Returns Chirper with the oracle's learned placement ({@link OracleStateMachine.Placement#GRAPH})
   * instead of {@link ChirperOracle}'s community rule: the demo's and the benchmark's
   * {@code graph} mode.
   *
   * @return the service
   */
  public static Service withLearnedPlacement() {
    return new ChirperService().get().toBuilder()
        .oracle(() -> new OracleStateMachine(OracleStateMachine.Placement.GRAPH))
        .build();
  }

  @Override
  public Service get() {
    return Service.newBuilder()
        .type(100, User.class)
        .type(101, Post.class)
        .type(102, Post[].class)
        .type(103, Ops.NewUser.class)
        .type(104, Ops.PostOp.class)
        .type(105, Ops.Follow.class)
        .type(106, Ops.Unfollow.class)
        .type(107, Ops.GetTimeline.class)
        .type(108, Ops.SeedUser.class)
        .server(ChirperServer::new)
        .oracle(ChirperOracle::new)
        .build();
  }
}
