package io.eyrie.tools;

import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.GroupStatus;
import io.eyrie.multicast.Node;
import io.eyrie.multicast.NodeStats;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * A node's counters as Micrometer meters, read when the registry is scraped: per hosted group
 * (tag {@code group}) the multicasts delivered by number of destination groups, executions,
 * parks, duplicates, channel items, pending and queued messages, snapshots, and Raft's view
 * (leader, term, commit and applied index, lag); per node what it sent to Ratis, and the latency
 * of the client multicasts it answered (a histogram). Binding sets the node's request listener.
 *
 * <pre>{@code
 * PrometheusMeterRegistry r = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
 * new NodeMetrics(node).bindTo(r);
 * }</pre>
 */
final class NodeMetrics implements MeterBinder {
  private final Node node;

  /**
   * Creates the binder.
   *
   * @param node the node to observe
   */
  public NodeMetrics(Node node) {
    this.node = node;
  }

  /** The groups whose meters are registered, per registry. */
  private final java.util.Map<MeterRegistry, java.util.Set<GroupId>> bound = new java.util.IdentityHashMap<>();

  @Override
  public void bindTo(MeterRegistry r) {
    Tags nodeTag = Tags.of("node", Integer.toString(node.id()));
    bindGroups(r);
    // Client multicasts answered here: latency from arrival to reply (a Prometheus histogram),
    // by reply group, number of destination groups (one, or several: the multi-partition
    // commands and moves) and outcome.
    node.setRequestListener((group, destinations, nanos, ok) -> Timer.builder("eyrie.requests")
        .description("client multicasts answered by this node, arrival to reply")
        .tags(nodeTag.and("group", group.name()).and("destinations", destinations == 1 ? "one" : "several")
            .and("outcome", ok ? "answered" : "failed"))
        .publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofSeconds(30))
        .register(r).record(nanos, TimeUnit.NANOSECONDS));
    traffic(r, "eyrie.starts", "client starts submitted to Ratis", nodeTag, NodeStats.Traffic::starts);
    traffic(r, "eyrie.start.entries", "log entries of client starts submitted", nodeTag, NodeStats.Traffic::startEntries);
    traffic(r, "eyrie.channel.batches", "channel batches sent (Ratis requests)", nodeTag, NodeStats.Traffic::channelBatches);
    traffic(r, "eyrie.channel.items", "channel items sent", nodeTag, NodeStats.Traffic::channelItems);
    traffic(r, "eyrie.channel.bytes", "encoded bytes of channel batches sent", nodeTag, NodeStats.Traffic::channelBytes);
    traffic(r, "eyrie.local.writes", "log entries handed to this node's own replica as leader, without a client RPC",
        nodeTag, NodeStats.Traffic::localWrites);
    traffic(r, "eyrie.peer.questions", "unlogged multicast questions (components, started queries) put to other nodes",
        nodeTag, NodeStats.Traffic::peerQuestions);
    traffic(r, "eyrie.peer.fallbacks", "of the peer questions, those the node-to-node link did not answer (sent as Ratis reads)",
        nodeTag, NodeStats.Traffic::peerFallbacks);
    Gauge.builder("eyrie.channel.backlog", node, n -> safe(() -> n.traffic().channelBacklog()))
        .description("outbox items of the channels this node sends not yet acknowledged by their receivers")
        .tags(nodeTag).register(r);
    endpoint(r, nodeTag);
  }

  /** The client endpoint's connection limits: what is open and held now, and each time a limit fired. */
  private void endpoint(MeterRegistry r, Tags t) {
    Gauge.builder("eyrie.endpoint.connections", node, n -> safe(() -> n.endpointStats().connections()))
        .description("open client connections").tags(t).register(r);
    Gauge.builder("eyrie.endpoint.requests.held", node, n -> safe(() -> n.endpointStats().heldRequests()))
        .description("client requests being worked on or read and waiting for their connection's in-flight bound")
        .tags(t).register(r);
    String refused = "client connections closed at accept over a cap (node: maxClientConnections, address: "
        + "maxClientConnectionsPerAddress)";
    endpointCounter(r, "eyrie.endpoint.refused", refused, t.and("reason", "node_cap"), NodeStats.Endpoint::refusedNodeCap);
    endpointCounter(r, "eyrie.endpoint.refused", refused, t.and("reason", "address_cap"),
        NodeStats.Endpoint::refusedAddressCap);
    endpointCounter(r, "eyrie.endpoint.frame.timeouts",
        "client connections closed for holding a started frame for frameIdleTimeoutMs", t,
        NodeStats.Endpoint::frameTimeouts);
    String rejected = "client connections closed for a frame over maxFrameBytes or one that does not decode";
    endpointCounter(r, "eyrie.endpoint.frames.rejected", rejected, t.and("reason", "too_long"),
        NodeStats.Endpoint::oversizedFrames);
    endpointCounter(r, "eyrie.endpoint.frames.rejected", rejected, t.and("reason", "malformed"),
        NodeStats.Endpoint::malformedFrames);
    endpointCounter(r, "eyrie.endpoint.read.pauses",
        "times a client connection reached maxInFlightPerConnection and was not read until answered", t,
        NodeStats.Endpoint::readPauses);
    endpointCounter(r, "eyrie.endpoint.busy", "client requests answered busy over maxPendingRequests", t,
        NodeStats.Endpoint::busyReplies);
    String tls = "TLS handshakes of client connections that failed (timeout: tlsHandshakeTimeoutMs; refused: no "
        + "client certificate, another CA's or an expired one, plaintext, no identity)";
    endpointCounter(r, "eyrie.endpoint.tls.handshakes.failed", tls, t.and("reason", "timeout"),
        NodeStats.Endpoint::tlsHandshakeTimeouts);
    endpointCounter(r, "eyrie.endpoint.tls.handshakes.failed", tls, t.and("reason", "refused"),
        NodeStats.Endpoint::tlsHandshakeFailures);
    endpointCounter(r, "eyrie.endpoint.forbidden",
        "client requests refused FORBIDDEN: the peer's role may not send them", t, NodeStats.Endpoint::forbidden);
    String raft = "Raft port connections refused (frame_limit: a frame over the Raft port's limit or a malformed "
        + "length prefix; tls: a refused or timed-out handshake, including a peer whose role is not node)";
    raftCounter(r, raft, t.and("reason", "frame_limit"), NodeStats.RaftPort::frameRefusals);
    raftCounter(r, raft, t.and("reason", "tls"), NodeStats.RaftPort::tlsRefusals);
  }

  private void raftCounter(MeterRegistry r, String help, Tags t, ToDoubleFunction<NodeStats.RaftPort> f) {
    FunctionCounter.builder("eyrie.raft.refused", node, n -> safe(() -> f.applyAsDouble(n.raftPortStats())))
        .description(help).tags(t).register(r);
  }

  private void endpointCounter(MeterRegistry r, String name, String help, Tags t, ToDoubleFunction<NodeStats.Endpoint> f) {
    FunctionCounter.builder(name, node, n -> safe(() -> f.applyAsDouble(n.endpointStats()))).description(help)
        .tags(t).register(r);
  }

  /**
   * Registers the meters of groups hosted here that have none in {@code r} yet: a group added
   * to the running cluster after binding (call it before each scrape; {@link NodeHttp} does).
   *
   * @param r the registry this binder was bound to
   */
  public synchronized void bindGroups(MeterRegistry r) {
    java.util.Set<GroupId> done = bound.computeIfAbsent(r, k -> new java.util.HashSet<>());
    Tags nodeTag = Tags.of("node", Integer.toString(node.id()));
    for (GroupId g : node.groups()) {
      if (!done.add(g)) {
        continue;
      }
      Tags t = nodeTag.and("group", g.name());
      counter(r, "eyrie.multicasts.delivered", "messages delivered, by number of destination groups",
          t.and("destinations", "one"), g, s -> s.delivered() - s.deliveredMulti());
      counter(r, "eyrie.multicasts.delivered", "messages delivered, by number of destination groups",
          t.and("destinations", "several"), g, s -> s.deliveredMulti());
      counter(r, "eyrie.log.entries.applied", "log entries applied", t, g, NodeStats.Group::entries);
      counter(r, "eyrie.executions", "executions finished (commands, moves, creates, deletes)", t, g,
          NodeStats.Group::executed);
      counter(r, "eyrie.executions.parked", "executions that waited for other groups", t, g, NodeStats.Group::parks);
      counter(r, "eyrie.duplicates", "client requests recognized as duplicates", t, g, NodeStats.Group::duplicates);
      counter(r, "eyrie.channel.items.sent", "channel items appended to outboxes", t, g, NodeStats.Group::itemsSent);
      counter(r, "eyrie.channel.items.received", "channel items applied from other groups", t, g,
          NodeStats.Group::itemsReceived);
      counter(r, "eyrie.snapshots.taken", "snapshots this replica wrote", t, g, NodeStats.Group::snapshotsTaken);
      counter(r, "eyrie.snapshots.installed", "snapshots a leader installed on this replica", t, g,
          NodeStats.Group::snapshotsInstalled);
      gauge(r, "eyrie.messages.pending", "messages known but not yet delivered", t, g, NodeStats.Group::pending);
      gauge(r, "eyrie.messages.queued", "delivered messages not yet executed", t, g, NodeStats.Group::queued);
      raft(r, "eyrie.raft.leader", "1 if this replica leads the group", t, g,
          s -> "LEADER".equals(s.replicas().get(0).role()) ? 1 : 0);
      raft(r, "eyrie.raft.leader.node", "the node this replica follows, 0 if none", t, g, GroupStatus::leader);
      raft(r, "eyrie.raft.term", "the current term, 0 without a leader", t, g, GroupStatus::term);
      raft(r, "eyrie.raft.commit.index", "the commit index this replica knows", t, g,
          s -> s.replicas().get(0).commitIndex());
      raft(r, "eyrie.raft.applied.index", "the index this replica applied", t, g,
          s -> s.replicas().get(0).appliedIndex());
      raft(r, "eyrie.raft.lag", "committed entries this replica has not applied", t, g,
          s -> s.lag(s.replicas().get(0)));
    }
  }

  private void counter(MeterRegistry r, String name, String help, Tags t, GroupId g,
      ToDoubleFunction<NodeStats.Group> f) {
    FunctionCounter.builder(name, node, n -> safe(() -> f.applyAsDouble(n.stats(g)))).description(help).tags(t)
        .register(r);
  }

  private void gauge(MeterRegistry r, String name, String help, Tags t, GroupId g, ToDoubleFunction<NodeStats.Group> f) {
    Gauge.builder(name, node, n -> safe(() -> f.applyAsDouble(n.stats(g)))).description(help).tags(t).register(r);
  }

  private void raft(MeterRegistry r, String name, String help, Tags t, GroupId g, ToDoubleFunction<GroupStatus> f) {
    Gauge.builder(name, node, n -> safe(() -> f.applyAsDouble(n.localStatus(g)))).description(help).tags(t)
        .register(r);
  }

  private void traffic(MeterRegistry r, String name, String help, Tags t, ToDoubleFunction<NodeStats.Traffic> f) {
    FunctionCounter.builder(name, node, n -> safe(() -> f.applyAsDouble(n.traffic()))).description(help).tags(t)
        .register(r);
  }

  /** A closed node or a group being reinstalled reads as NaN rather than failing the scrape. */
  private static double safe(java.util.function.DoubleSupplier s) {
    try {
      return s.getAsDouble();
    } catch (RuntimeException e) {
      return Double.NaN;
    }
  }
}
