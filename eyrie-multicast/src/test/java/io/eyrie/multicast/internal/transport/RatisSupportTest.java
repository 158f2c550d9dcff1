package io.eyrie.multicast.internal.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.NodeOptions;
import java.io.File;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The Ratis settings a node runs with, where Ratis's defaults hurt availability. */
@Timeout(30)
class RatisSupportTest {
  @Test
  void steppedDownLeaderStandsAgainAfterOneElectionTimeout() {
    NodeOptions o = NodeOptions.newBuilder().electionTimeoutMs(700, 1400).build();
    RaftProperties p = RatisSupport.serverProperties(new ClusterConfig.NodeInfo(1, "127.0.0.1", 1, 2),
        new File("unused"), o);
    // Ratis's default is 10 s, during which a group whose leader stepped down has no leader.
    assertEquals(1400, RaftServerConfigKeys.LeaderElection.leaderStepDownWaitTime(p).toLong(TimeUnit.MILLISECONDS));
    assertEquals(700, RaftServerConfigKeys.Rpc.timeoutMin(p).toLong(TimeUnit.MILLISECONDS));
    assertEquals(1400, RaftServerConfigKeys.Rpc.timeoutMax(p).toLong(TimeUnit.MILLISECONDS));
  }
}
