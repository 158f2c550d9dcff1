package io.eyrie.tools;

import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.GroupStatus;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Owns {@code eyrie status --format json}: the facts of the text output as one JSON object,
 * written by hand (no JSON library is on the tools' classpath).
 *
 * <pre>{@code
 * {"allLed": true,
 *  "groups": [{"group": "p0", "kind": "partition", "leader": 2, "term": 3, "commitIndex": 41,
 *              "raftGroupId": "...", "replicas": [{"node": 1, "reachable": true, "role": "follower",
 *              "appliedIndex": 41, "lag": 0, "lastIndex": 41, "snapshotIndex": -1}, ...]}, ...],
 *  "objects": {"p0": 3, "p1": null},
 *  "locate": {"object": 3, "partition": "p1", "error": null}}
 * }</pre>
 *
 * <p>{@code leader} is null when the group has none; an unreachable replica has only
 * {@code node} and {@code reachable: false}; an object count is null when the partition did not
 * answer; {@code objects} is absent without an oracle, {@code locate} without {@code --locate}.
 */
final class StatusJson {
  private StatusJson() {}

  /**
   * Where the oracle places one object.
   *
   * @param object the object's id
   * @param partition its partition, null if the oracle does not know it (or did not answer)
   * @param error why the oracle did not answer, null if it did
   */
  record Location(long object, GroupId partition, String error) {}

  static String render(ClusterConfig cluster, List<GroupStatus> groups, Map<GroupId, Long> objects,
      Location located, boolean allLed) {
    StringBuilder b = new StringBuilder("{\"allLed\": ").append(allLed).append(", \"groups\": [");
    String sep = "";
    for (GroupStatus g : groups) {
      b.append(sep).append("{\"group\": ").append(str(g.group().name()))
          .append(", \"kind\": ").append(str(cluster.group(g.group()).kind().name().toLowerCase(Locale.ROOT)))
          .append(", \"leader\": ").append(g.leader() == 0 ? "null" : Integer.toString(g.leader()))
          .append(", \"term\": ").append(g.term())
          .append(", \"commitIndex\": ").append(g.commitIndex())
          .append(", \"raftGroupId\": ").append(str(g.raftGroupId()))
          .append(", \"replicas\": [");
      String rsep = "";
      for (GroupStatus.Replica r : g.replicas()) {
        b.append(rsep).append("{\"node\": ").append(r.node()).append(", \"reachable\": ").append(r.reachable());
        if (r.reachable()) {
          b.append(", \"role\": ").append(str(r.role().toLowerCase(Locale.ROOT)))
              .append(", \"appliedIndex\": ").append(r.appliedIndex())
              .append(", \"lag\": ").append(g.lag(r))
              .append(", \"lastIndex\": ").append(r.lastIndex())
              .append(", \"snapshotIndex\": ").append(r.snapshotIndex());
        }
        b.append('}');
        rsep = ", ";
      }
      b.append("]}");
      sep = ", ";
    }
    b.append(']');
    if (!objects.isEmpty()) {
      b.append(", \"objects\": {");
      String osep = "";
      for (Map.Entry<GroupId, Long> e : objects.entrySet()) {
        b.append(osep).append(str(e.getKey().name())).append(": ")
            .append(e.getValue() == null ? "null" : e.getValue().toString());
        osep = ", ";
      }
      b.append('}');
    }
    if (located != null) {
      b.append(", \"locate\": {\"object\": ").append(located.object())
          .append(", \"partition\": ").append(located.partition() == null ? "null" : str(located.partition().name()))
          .append(", \"error\": ").append(located.error() == null ? "null" : str(located.error())).append('}');
    }
    return b.append('}').toString();
  }

  /** A JSON string literal. */
  static String str(String s) {
    StringBuilder b = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }
}
