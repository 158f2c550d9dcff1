package io.eyrie.core;

import io.eyrie.core.protocol.AccessReq;
import io.eyrie.core.protocol.ConsultReq;
import io.eyrie.core.protocol.CreateReq;
import io.eyrie.core.protocol.DeleteReq;
import io.eyrie.core.protocol.ReadReq;
import io.eyrie.core.protocol.SsmrReq;
import io.eyrie.core.protocol.StatsReq;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.CodecRegistry;
import io.eyrie.multicast.Deliverer;
import io.eyrie.multicast.ForbiddenRequestException;
import io.eyrie.multicast.Identity;
import io.eyrie.multicast.NodeApp;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A DS-SMR service, described once: the types it sends and stores, the partition server, and
 * the oracle. Immutable. Hand the same descriptor to the nodes
 * ({@link io.eyrie.multicast.Node#start(ClusterConfig, int, java.nio.file.Path, NodeApp,
 * io.eyrie.multicast.NodeOptions) Node.start}, {@link io.eyrie.multicast.EmbeddedCluster.Builder#app
 * EmbeddedCluster.Builder.app}) and to the clients ({@link Client.Builder#service}), so that they
 * always agree on the encoding.
 *
 * <pre>{@code
 * Service kv = Service.newBuilder()
 *     .type(100, Entry.class)                // ids are the wire format: never renumber, only add
 *     .type(101, KvOps.Put.class)
 *     .server(KvServer::new)                 // a StateMachine per partition replica
 *     .oracle(OracleStateMachine::new)       // eyrie-oracle's, or a subclass with its own placement
 *     .build();
 * }</pre>
 *
 * <p><b>Hosting a service in a node process.</b> The node launcher ({@code bin/eyrie node
 * --service CLASS}) instantiates CLASS with its public no-argument constructor; CLASS must
 * implement {@code java.util.function.Supplier<io.eyrie.core.Service>} and return the service
 * (for example {@code io.eyrie.examples.kv.KvService}).
 */
public final class Service implements NodeApp {
  private static final Logger LOG = LoggerFactory.getLogger(Service.class);
  private final List<Type> types;
  private final CodecRegistry registry;
  private final Supplier<? extends StateMachine> server;
  private final Supplier<? extends Deliverer> oracle;
  private final Authorizer authorizer;

  private record Type(int id, Class<?> type, CodecRegistry.Encoding encoding) {}

  private Service(Builder b) {
    this.types = List.copyOf(b.types);
    CodecRegistry.Builder r = Eyrie.registry().toBuilder();
    for (Type t : types) {
      r.register(t.id(), t.type(), t.encoding());
    }
    this.registry = r.build();
    this.server = b.server;
    this.oracle = b.oracle;
    this.authorizer = b.authorizer;
  }

  /** Returns a builder. */
  public static Builder newBuilder() {
    return new Builder();
  }

  /**
   * Returns a builder holding this service's types, server and oracle, for a variant of it: a
   * run with another oracle, or one more type. This service does not change.
   *
   * <pre>{@code
   * Service learned = new KvService().get().toBuilder()
   *     .oracle(() -> new OracleStateMachine(OracleStateMachine.Placement.GRAPH))
   *     .build();
   * }</pre>
   *
   * @return a new builder
   */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.types.addAll(types);
    b.server = server;
    b.oracle = oracle;
    b.authorizer = authorizer;
    return b;
  }

  /** Returns the registry holding Eyrie's classes and this service's (immutable). */
  @Override
  public CodecRegistry registry() {
    return registry;
  }

  /** Returns the deliverers of the service's partitions and oracle. */
  @Override
  public Deliverer.Factory deliverers() {
    return Eyrie.deliverers(server, oracle);
  }

  /**
   * The role a request to this service needs on a node whose client port runs mutual TLS: an
   * admin (or a node) for the partition administration and what reads the whole placement,
   * anyone else's commands for the rest. Admin-only: {@link
   * io.eyrie.core.protocol.PartitionChange} (adding, retiring and draining partitions, {@link
   * Client#addPartition}, {@link Client#retirePartition}, {@link Client#drain}) and {@link
   * io.eyrie.core.protocol.StatsReq} with objects (the oracle's whole map and a partition's object
   * ids: {@link Client#audit}, {@link Client#locationOf}). Moves, rebalancing rounds and the
   * counters of {@link Client#partitionStats} stay open to clients, as every DS-SMR client moves
   * objects.
   *
   * <p>With an {@link Builder#authorizer authorizer}, a request that carries an application
   * command from a {@code client} or {@code admin} peer ({@link NodeApp#currentPeer()}) is also
   * put to it, and refused ({@link ForbiddenRequestException}) if it denies, returns null or
   * throws.
   *
   * @param request a decoded multicast payload or query
   * @return {@code ADMIN} or null (any identity)
   * @throws ForbiddenRequestException if the authorizer refuses the command
   */
  @Override
  public Identity.Role requiredRole(Object request) {
    if (request instanceof io.eyrie.core.protocol.PartitionChange
        || request instanceof StatsReq s && s.withObjects()) {
      return Identity.Role.ADMIN;
    }
    if (authorizer != null) {
      authorize(request);
    }
    return null;
  }

  /** Puts an application command from a client or admin peer to the authorizer. */
  private void authorize(Object request) {
    Command cmd;
    if (request instanceof ConsultReq r) {
      cmd = r.cmd();
    } else if (request instanceof AccessReq r) {
      cmd = r.cmd();
    } else if (request instanceof SsmrReq r) {
      cmd = r.cmd();
    } else if (request instanceof ReadReq r) {
      cmd = r.cmd();
    } else if (request instanceof CreateReq r) {
      cmd = r.cmd();
    } else if (request instanceof DeleteReq r) {
      cmd = r.cmd();
    } else {
      return; // not an application command: the role alone decides
    }
    Identity peer = NodeApp.currentPeer();
    if (peer == null || peer.role() == Identity.Role.NODE) {
      return;
    }
    if (cmd == null) {
      throw new ForbiddenRequestException("the request carries no command");
    }
    Authorizer.Decision d;
    try {
      d = authorizer.authorize(peer, cmd);
    } catch (ForbiddenRequestException e) {
      throw e; // the hook's own refusal, with its reason
    } catch (Throwable e) { // a hook that fails (a StackOverflowError too) must not open the door
      LOG.warn("the service's authorizer failed for {} on {}: {}", peer, request.getClass().getSimpleName(),
          e.toString(), e);
      throw new ForbiddenRequestException("the service's authorizer failed (" + e.getClass().getSimpleName()
          + "); refused");
    }
    if (d == null) {
      throw new ForbiddenRequestException("the service's authorizer gave no decision; refused");
    }
    if (!d.allowed()) {
      throw new ForbiddenRequestException(d.reason());
    }
  }

  /** A partition or the oracle answers this query once it serves reads (its counters; cheap). */
  @Override
  public Object readinessQuery() {
    return new StatsReq(false);
  }

  /** Builds a {@link Service}. */
  public static final class Builder {
    private final List<Type> types = new ArrayList<>();
    private Supplier<? extends StateMachine> server;
    private Supplier<? extends Deliverer> oracle;
    private Authorizer authorizer;

    private Builder() {}

    /**
     * Registers a type the service sends or stores: its objects ({@link PRObject} subclasses),
     * operations, replies and anything they hold that Eyrie does not register already (common
     * JDK types such as String, boxed numbers, ArrayList, HashMap and TreeMap are). Records,
     * enums, arrays and classes with a no-argument constructor work.
     *
     * @param id the registration id, 100 or more; it is the wire and snapshot format, so never
     *     renumber a type, only add new ones
     * @param type the class
     * @return this builder
     */
    public Builder type(int id, Class<?> type) {
      return type(id, type, CodecRegistry.Encoding.DEFAULT);
    }

    /**
     * Registers a type with an encoding, as {@link #type(int, Class)} does. Use
     * {@link CodecRegistry.Encoding#COMPATIBLE} for a plain class (not a record) whose fields may
     * be added or removed between releases: a field added in release N+1 is skipped by nodes and
     * clients of release N and keeps its constructor's value when N+1 reads N's objects, so the
     * two interoperate during a rolling upgrade (docs/design.md, 4.7.1). An added field must be of
     * a type N decodes and not a generic collection (see {@link CodecRegistry.Encoding}).
     * Registration stays required; never change a registered type's encoding.
     *
     * @param id the registration id, 100 or more
     * @param type the class
     * @param encoding how its objects are encoded
     * @return this builder
     */
    public Builder type(int id, Class<?> type, CodecRegistry.Encoding encoding) {
      types.add(new Type(id, Objects.requireNonNull(type, "type"), Objects.requireNonNull(encoding, "encoding")));
      return this;
    }

    /**
     * Sets the partition server (required): called once per partition replica.
     *
     * @param s creates a new {@link StateMachine}
     * @return this builder
     */
    public Builder server(Supplier<? extends StateMachine> s) {
      this.server = Objects.requireNonNull(s, "server");
      return this;
    }

    /**
     * Sets the oracle (required): called once per oracle replica. Use eyrie-oracle's
     * {@code OracleStateMachine::new} for the default placement, or a subclass of it.
     *
     * @param o creates a new oracle
     * @return this builder
     */
    public Builder oracle(Supplier<? extends Deliverer> o) {
      this.oracle = Objects.requireNonNull(o, "oracle");
      return this;
    }

    /**
     * Sets the per-command authorization hook (default none: any identity may run any command).
     * On a node with mutual TLS on its client port, the node that receives a request carrying an
     * application command from a {@code client} or {@code admin} identity asks the hook before
     * the command is submitted to any log; a denial (or a hook that throws or returns null) is
     * answered {@code FORBIDDEN} with the reason, logged with the peer's identity and counted in
     * {@code eyrie_endpoint_forbidden_total}. Not called for {@code node} identities, nor without
     * TLS (no identity: everything is allowed). See {@link Authorizer}.
     *
     * <pre>{@code
     * Service bank = new BankService().get().toBuilder()
     *     .authorizer((peer, cmd) -> cmd.objects().stream().allMatch(o -> owns(peer.name(), o))
     *         ? Authorizer.Decision.allow()
     *         : Authorizer.Decision.deny("not your account"))
     *     .build();
     * }</pre>
     *
     * @param a the hook, or null for none
     * @return this builder
     */
    public Builder authorizer(Authorizer a) {
      this.authorizer = a;
      return this;
    }

    /**
     * Returns the service.
     *
     * @return the service
     * @throws IllegalArgumentException if an id is reserved or used twice for different types
     */
    public Service build() {
      Objects.requireNonNull(server, "server");
      Objects.requireNonNull(oracle, "oracle (OracleStateMachine::new from eyrie-oracle for the default placement)");
      return new Service(this); // fails now, not on a node, if two types share an id
    }
  }

  /**
   * Decides, per command, whether a peer may run it: the application's authorization by object, set
   * with {@link Service.Builder#authorizer}. It sees who sends (the {@link Identity} of the peer's
   * certificate: its name and role) and the decoded {@link Command}: its kind, the application's
   * operation ({@link Command#op()}) and the objects it touches ({@link Command#objects()}).
   *
   * <p><b>Where and when.</b> On a node whose client port runs mutual TLS, the node that receives a
   * client's request calls the hook before the request is submitted to any log, on the endpoint's
   * threads: it must be quick and must not block. A denial is answered {@code FORBIDDEN} with the
   * reason ({@code forbidden: identity app (client) may not multicast AccessReq: <reason>}), logged
   * with the peer's identity and counted in the node's {@code eyrie_endpoint_forbidden_total}; the
   * client's call fails with a {@link io.eyrie.multicast.MulticastException} of status {@code
   * FORBIDDEN}, and nothing of the command runs. A hook that throws (any Throwable) or returns
   * null denies; one that throws {@link io.eyrie.multicast.ForbiddenRequestException} denies with
   * that exception's reason.
   *
   * <p>It is called for every request that carries an application command from a {@code client}
   * or {@code admin} identity: the consultation of the oracle, the command itself sent to its
   * partitions, a read-only command, a create and a delete. One command may therefore be judged
   * more than once (at the oracle and at its partitions, and again when resent), so the decision
   * must depend on the peer and the command only. It is not called for a {@code node} identity
   * (a node replicates every command and may send everything), nor for Eyrie's own requests
   * (moves, partition changes, statistics; {@link Service#requiredRole} governs those), and not at
   * all without TLS: a node without TLS knows no identity and lets everyone send everything.
   */
  @FunctionalInterface
  public interface Authorizer {

    /**
     * Decides whether {@code peer} may run {@code command}.
     *
     * @param peer the identity of the peer's certificate: never null, never a {@code node}
     * @param command the decoded command, as the client proxy sent it
     * @return {@link Decision#allow()} or {@link Decision#deny(String)}; null denies
     */
    Decision authorize(Identity peer, Command command);

    /**
     * A decision: allowed, or denied with a reason sent back to the peer.
     *
     * @param allowed whether the command may run
     * @param reason why it may not (null if allowed)
     */
    record Decision(boolean allowed, String reason) {
      private static final Decision ALLOW = new Decision(true, null);

      /** Checks that a denial has a reason. */
      public Decision {
        if (!allowed) {
          Objects.requireNonNull(reason, "a denial needs a reason");
        }
      }

      /**
       * Returns the decision that lets the command run.
       *
       * @return the allowing decision
       */
      public static Decision allow() {
        return ALLOW;
      }

      /**
       * Returns a denial.
       *
       * @param reason why, for the peer (it is sent back with {@code FORBIDDEN}; say nothing the
       *     peer must not learn)
       * @return the denial
       */
      public static Decision deny(String reason) {
        return new Decision(false, reason);
      }
    }
  }
}
