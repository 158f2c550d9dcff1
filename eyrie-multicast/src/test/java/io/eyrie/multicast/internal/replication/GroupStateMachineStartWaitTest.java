package io.eyrie.multicast.internal.replication;

import static io.eyrie.multicast.internal.state.RulesSupport.G0;
import static io.eyrie.multicast.internal.state.RulesSupport.G1;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.Wire.Decision;
import io.eyrie.multicast.internal.Wire.Start;
import io.eyrie.multicast.internal.Wire.StartBatch;
import io.eyrie.multicast.internal.state.GroupState;
import io.eyrie.multicast.internal.state.RulesSupport;
import io.eyrie.multicast.internal.state.SimDeliverer;
import java.util.concurrent.CompletableFuture;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The reply gate's local wait (design 4.3.1 rule 11, {@link GroupStateMachine#whenStarted}): a
 * replica that has not applied a message's decision yet completes the wait from its apply thread
 * as soon as it does, instead of the gate asking the group's leader over the network, and never
 * says "started" before its applied state shows positive evidence.
 */
@Timeout(30)
class GroupStateMachineStartWaitTest {
  private final RulesSupport t = new RulesSupport();
  private final GroupState s = t.group(G1, new SimDeliverer(null));
  private final GroupStateMachine sm = new GroupStateMachine(G1, t.codec, g -> s, (g, leader, node) -> {});
  private long index;

  private void apply(StartBatch b) {
    byte[] bytes = t.codec.encode(b);
    index++;
    LogEntryProto e = LogEntryProto.newBuilder().setTerm(1).setIndex(index)
        .setStateMachineLogEntry(StateMachineLogEntryProto.newBuilder().setLogData(ByteString.copyFrom(bytes))).build();
    sm.applyTransaction(TransactionContext.newBuilder().setStateMachine(sm).setLogEntry(e).build()).join();
  }

  @Test
  void theWaitCompletesWhenTheReplicaAppliesTheDecisionAndNotBefore() {
    Start m = t.start(1, 0, G0, G0, G1);
    apply(new StartBatch(10_000L, new Start[] {m}));
    CompletableFuture<Boolean> w = sm.whenStarted(m.id());
    assertFalse(w.isDone(), "undecided at this replica: no positive evidence yet");
    assertFalse(s.started(m.id()));

    Start other = t.start(2, 0, G1, G1);
    apply(new StartBatch(10_000L, new Start[] {other}));
    assertFalse(w.isDone(), "an unrelated entry does not release the wait");

    Decision d = RulesSupport.decision(s, m, 5);
    apply(new StartBatch(-1, new Start[0], new Decision[] {d}, null));
    assertTrue(s.started(m.id()), "decided at final timestamp 5 and delivered here");
    assertTrue(w.isDone(), "completed by the apply that made the message start, without a deadline");
    assertTrue(w.join());
    assertTrue(sm.whenStarted(m.id()).join(), "a wait for a started message completes at once");
  }

  @Test
  void aWaitGivenUpIsDroppedAndANewOneIsFresh() {
    Start m = t.start(3, 0, G0, G0, G1);
    apply(new StartBatch(10_000L, new Start[] {m}));
    CompletableFuture<Boolean> w = sm.whenStarted(m.id());
    w.complete(false); // the gate's deadline
    CompletableFuture<Boolean> again = sm.whenStarted(m.id());
    assertNotSame(w, again, "a wait completed false by its caller is not handed out again");
    apply(new StartBatch(-1, new Start[0], new Decision[] {RulesSupport.decision(s, m, 7)}, null));
    assertTrue(again.join());
    assertEquals(false, w.join());
  }

  @Test
  void aMessageThisReplicaNeverSawIsNotStarted() {
    CompletableFuture<Boolean> w = sm.whenStarted(MsgId.valueOf(99, 1, 0));
    apply(new StartBatch(10_000L, new Start[] {t.start(4, 0, G1, G1)}));
    assertFalse(w.isDone());
  }
}
