package io.eyrie.multicast.internal.replication;

import static io.eyrie.multicast.internal.state.RulesSupport.G0;
import static io.eyrie.multicast.internal.state.RulesSupport.G1;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.internal.state.GroupState;
import io.eyrie.multicast.internal.state.RulesSupport;
import io.eyrie.multicast.internal.state.SimDeliverer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link ChannelSender#pump} with a batch that cannot be encoded (review F6). */
@Timeout(30)
class ChannelSenderSendTest {

  /**
   * An outbox item that cannot be encoded (it got there without going through the application's
   * send, which now encodes) used to throw out of the sender after the batch was counted in
   * flight, so the window filled up for ever. The failure must go through onFailure.
   */
  @Test
  void unencodableBatchIsAFailureNotALeak() {
    RulesSupport t = new RulesSupport();
    GroupState s = t.group(G0, new SimDeliverer(null));
    RulesSupport.appendRaw(s, G1, new Object());
    GroupStateMachine sm = new GroupStateMachine(G0, t.codec, g -> s, (g, leader, node) -> {});
    RaftClientHolder client = new RaftClientHolder(() -> {
      throw new IllegalStateException("no cluster in this test");
    });
    ChannelSender cs = new ChannelSender(sm, G1, client, t.codec, 4, 1024);
    cs.activate();
    assertDoesNotThrow(() -> cs.pump(false));
    assertTrue(cs.describe().contains("inFlight=0"), cs.describe());
  }
}
