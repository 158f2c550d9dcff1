package io.eyrie.multicast;

import io.eyrie.multicast.internal.replication.GroupStateMachine;
import io.eyrie.multicast.internal.replication.NodeChannels;
import io.eyrie.multicast.internal.replication.ReplyRouter;
import io.eyrie.multicast.internal.state.StateCounters;
import io.eyrie.multicast.internal.transport.RatisSupport;
import java.io.IOException;
import java.util.List;
import org.apache.ratis.server.RaftServer;

/**
 * What a node tells about itself, read from its hosted replicas, its Raft server and its
 * channels without asking other nodes: counters and status per group, and descriptions of its
 * progress for people diagnosing a stuck message (see {@link Node#stats}, {@link Node#localStatus}
 * and {@link Node#describe()}).
 */
record NodeDiagnostics(int nodeId, GroupHost host, NodeChannels channels) {
  /** Counters of the local replica of a hosted group. */
  NodeStats.Group stats(GroupId g) {
    GroupStateMachine sm = host.machine(g);
    return sm.read(s -> {
      StateCounters st = s.stats();
      return new NodeStats.Group(st.entries, st.delivered, st.deliveredMulti, st.executed, st.parks, st.duplicates,
          st.itemsSent, st.itemsReceived, s.pendingCount(), s.queuedCount(), sm.snapshotsTaken(),
          sm.snapshotsLoaded(), sm.snapshotsInstalled());
    });
  }

  /** Per hosted group, its replica's description, then the channels'. */
  String describe() {
    StringBuilder b = new StringBuilder("node ").append(nodeId).append('\n');
    for (GroupId g : host.groups()) {
      GroupStateMachine sm = host.machineOrNull(g);
      if (sm != null) {
        b.append(sm.<String>read(s -> s.describe()));
      }
    }
    b.append(channels.describe());
    return b.toString();
  }

  /** What each hosted group's replica, and the submitters, know of one message. */
  String describe(MsgId id) {
    StringBuilder b = new StringBuilder();
    for (GroupId g : host.groups()) {
      GroupStateMachine sm = host.machineOrNull(g);
      if (sm != null) {
        ReplyRouter r = host.router(g);
        b.append("node ").append(nodeId).append(' ').append(sm.<String>read(s -> s.describe(id)))
            .append(r != null && r.isWaiting(id) ? " (a request waits here)" : "").append('\n');
      }
    }
    String sub = channels.describe(id);
    if (!sub.isEmpty()) {
      b.append("node ").append(nodeId).append(sub).append('\n');
    }
    return b.toString();
  }

  /** What this node's Raft server knows of a hosted group (see {@link Node#localStatus}). */
  GroupStatus localStatus(GroupId g) {
    host.machine(g);
    try {
      RaftServer.Division d = host.division(g);
      var info = d.getInfo();
      int leader = info.getLeaderId() == null ? 0 : RatisSupport.nodeId(info.getLeaderId());
      var snapshot = d.getStateMachine().getLatestSnapshot();
      var last = d.getRaftLog().getLastEntryTermIndex();
      GroupStatus.Replica r = new GroupStatus.Replica(nodeId, true, info.getCurrentRole().name(),
          d.getRaftLog().getLastCommittedIndex(), info.getLastAppliedIndex(), last == null ? 0 : last.getIndex(),
          snapshot == null ? -1 : snapshot.getIndex());
      return new GroupStatus(g, GroupStatus.raftGroupIdOf(g), leader, leader == 0 ? 0 : info.getCurrentTerm(),
          List.of(r));
    } catch (IOException e) {
      return new GroupStatus(g, GroupStatus.raftGroupIdOf(g), 0, 0,
          List.of(new GroupStatus.Replica(nodeId, false, "UNREACHABLE", 0, 0, 0, -1)));
    }
  }
}
