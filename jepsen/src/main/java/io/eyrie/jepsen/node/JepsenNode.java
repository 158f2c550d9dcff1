package io.eyrie.jepsen.node;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.PRObject;
import io.eyrie.core.Service;
import io.eyrie.core.StateMachine;
import io.eyrie.examples.bank.BankServer;
import io.eyrie.examples.bank.BankService;
import java.util.function.Supplier;

/**
 * The Jepsen harness's services, {@code register}, {@code kv} and {@code bank}, and the node
 * process that hosts one of them:
 *
 * <pre>java -cp ... io.eyrie.jepsen.node.JepsenNode --cluster FILE --id N --service register|kv|bank --data DIR
 *     [--unsafe-reads [PORT]] [--snapshot-threshold ENTRIES]</pre>
 */
public final class JepsenNode {
  private JepsenNode() {}

  /** A register keyed by its object id; {@code null} until written. */
  public static final class Register extends PRObject {
    Long value;

    private Register() {}

    Register(ObjId id, Long value) {
      super(id);
      this.value = value;
    }
  }

  /** Register operations. */
  public record Read() {}

  /** Writes the target register; replies "ok". */
  public record Write(long value) {}

  /** Compare-and-set on the target register; replies Boolean. */
  public record Cas(long expected, long value) {}

  /** Touches two registers (forces a move): writes both, replies "ok". */
  public record WritePair(long k1, long v1, long k2, long v2) {}

  /**
   * Touches two registers without changing them (forces them into one partition); replies "ok".
   * The nemesis's move storm sends these.
   */
  public record TouchPair(long k1, long k2) {}

  /**
   * A register operation ({@code Read}, {@code Write} or {@code Cas}) on the register {@code key},
   * in a command that also touches other registers: those are gathered into the key's partition
   * (a forced move) and left unchanged.
   */
  public record Keyed(long key, Object op) {}

  /**
   * The create op of a {@code kv} key that the service refuses on purpose: its
   * {@code createObject} throws, so the create is {@code REFUSED} and nothing is created (the
   * harness's {@code --failing-creates}). {@code value} is only what the harness records; no key
   * ever holds it.
   */
  public record FailingCreate(long value) {}

  /**
   * A {@code kv} write that sets the key to {@code value} and then throws (the harness's
   * {@code --throwing-writes}): the library must undo the write, and the client gets a
   * {@code MulticastException}. The key keeps its old value.
   */
  public record ThrowingWrite(long value) {}

  /**
   * The operation a command applies and the object it acts on: a {@link Keyed} op's own op and
   * key, else the command's op on its target (its first object).
   */
  record Targeted(ObjId target, Object op) {
    static Targeted of(Command c) {
      return c.op() instanceof Keyed k ? new Targeted(ObjId.valueOf(k.key()), k.op()) : new Targeted(c.target(), c.op());
    }

    /** Whether the command names the object (a {@link Keyed} key need not be among them). */
    boolean inCommand(Command c) {
      return c.objects().contains(target);
    }

    String outside() {
      return "keyed operation on " + target + " outside the command's objects";
    }
  }

  /**
   * A key of the {@code kv} service: an object that exists between a DS-SMR create and a DS-SMR
   * delete, holding a value. Unlike a {@link Register} it is never "empty": absence is the
   * object not existing.
   */
  public static final class KvEntry extends PRObject {
    long value;

    private KvEntry() {}

    KvEntry(ObjId id, long value) {
      super(id);
      this.value = value;
    }
  }

  /**
   * Returns a jepsen service with the given partition server and the default oracle. Every
   * jepsen service has the same types, so that one client works with any of them: the example
   * bank's ({@link BankServer}, ids 100-103), which the bank service hosts, the register
   * service's (ids 200-209) and the kv service's (210; it reuses the register's operations, and
   * adds {@link FailingCreate} 211 and {@link ThrowingWrite} 212, its deliberate failures).
   *
   * @param server creates the partition server of one replica
   * @return the service
   */
  public static Service service(Supplier<? extends StateMachine> server) {
    return new BankService().get().toBuilder()
        .type(200, Register.class)
        .type(201, Read.class)
        .type(202, Write.class)
        .type(203, Cas.class)
        .type(204, WritePair.class)
        .type(208, TouchPair.class)
        .type(209, Keyed.class)
        .type(210, KvEntry.class)
        .type(211, FailingCreate.class)
        .type(212, ThrowingWrite.class)
        .server(server)
        .build();
  }

  /**
   * Returns the service a node hosts for {@code --service NAME}.
   *
   * @param name {@code register}, {@code kv} or {@code bank}
   * @return the service
   * @throws IllegalArgumentException for another name
   */
  public static Service service(String name) {
    return switch (name) {
      case "register" -> service(RegisterServer::new);
      case "kv" -> service(KvServer::new);
      case "bank" -> service(BankServer::new);
      default -> throw new IllegalArgumentException("unknown service " + name + " (register, kv or bank)");
    };
  }

  /**
   * Returns the service the harness's clients use: every jepsen service has the same types, so
   * this one (the register service) encodes the commands of each of them.
   *
   * @return the service
   */
  public static Service clientService() {
    return service("register");
  }

  /**
   * The register service's partition server. {@code Read}, {@code Write} and {@code Cas} act on
   * the command's target (its first object); any further objects of the command are only
   * gathered into the target's partition, which is how the harness forces moves.
   *
   * <p>With a {@link UnsafeReads} view, every value this replica applies is also published there
   * (a side effect outside the replicated state, read by the positive control's unordered reads).
   */
  public static final class RegisterServer extends StateMachine {
    private final UnsafeReads view;

    /** A server without the unsafe view. */
    public RegisterServer() {
      this(null);
    }

    RegisterServer(UnsafeReads view) {
      this.view = view;
    }

    @Override
    protected Object executeCommand(Command c) {
      Targeted on = Targeted.of(c);
      if (!on.inCommand(c)) {
        throw new IllegalArgumentException(on.outside());
      }
      Object op = on.op();
      ObjId target = on.target();
      if (op instanceof Read) {
        return ((Register) getObject(target)).value;
      }
      if (op instanceof Write w) {
        set(target, w.value());
        return "ok";
      }
      if (op instanceof Cas cas) {
        Register r = (Register) getObject(target);
        if (r.value != null && r.value == cas.expected()) {
          set(target, cas.value());
          return Boolean.TRUE;
        }
        return Boolean.FALSE;
      }
      if (op instanceof WritePair p) {
        set(ObjId.valueOf(p.k1()), p.v1());
        set(ObjId.valueOf(p.k2()), p.v2());
        return "ok";
      }
      if (op instanceof TouchPair t) {
        getObject(ObjId.valueOf(t.k1()));
        getObject(ObjId.valueOf(t.k2()));
        return "ok";
      }
      throw new IllegalArgumentException("unknown register operation " + op);
    }

    private void set(ObjId id, Long value) {
      ((Register) getObject(id)).value = value;
      if (view != null) {
        view.applied(id.value(), value);
      }
    }

    @Override
    protected PRObject createObject(Command c) {
      Long v = (Long) c.op();
      if (view != null) {
        view.applied(c.target().value(), v);
      }
      return new Register(c.target(), v);
    }
  }

  /**
   * The {@code kv} service's partition server: keys are {@link KvEntry} objects that the harness
   * creates and deletes with DS-SMR's own create and delete commands (so the oracle's map, the
   * consults and the partitions' objects all take part), and reads and writes with the register's
   * operations: {@code Read} (replies the Long value), {@code Write(v)} (replies "ok"),
   * {@code Cas(expected, value)} (replies Boolean), and {@code Keyed(k, op)} for one of those on
   * key k in a command that also names other keys (they are gathered into k's partition: a
   * forced move, left unchanged). {@code TouchPair} gathers two keys without changing them.
   *
   * <p>What a client sees for an absent key is decided by the library, before this code runs: a
   * create of an existing key answers nok, an access to an absent key answers nok ("no such
   * object"), and a delete answers ok whether or not the key existed. This server never sees
   * an absent key (DS-SMR executes a command only when all its objects are local); if it did,
   * or got an operation it does not know, it replies an error string and changes nothing.
   *
   * <p>It fails on purpose only when asked to, by two operations no other service or workload
   * sends (the harness's {@code --failing-creates} and {@code --throwing-writes}): a create whose
   * op is a {@link FailingCreate} throws in {@link #createObject} (the library refuses the
   * create: {@code REFUSED}, nothing created), and a {@link ThrowingWrite} sets the key's value
   * and then throws (the library undoes the write; the client gets a {@code MulticastException}).
   * Both are deterministic: every replica fails alike. Every other operation never throws.
   */
  public static final class KvServer extends StateMachine {
    /** The reply for an operation this server cannot apply. */
    static final String ERROR = "error: ";

    @Override
    protected Object executeCommand(Command c) {
      Targeted on = Targeted.of(c);
      if (!on.inCommand(c)) {
        return ERROR + on.outside();
      }
      Object op = on.op();
      ObjId target = on.target();
      if (op instanceof TouchPair) {
        return "ok";
      }
      if (!(getObject(target) instanceof KvEntry e)) {
        return ERROR + "no key " + target;
      }
      if (op instanceof Read) {
        return e.value;
      }
      if (op instanceof Write w) {
        e.value = w.value();
        return "ok";
      }
      if (op instanceof ThrowingWrite w) {
        e.value = w.value();
        throw new IllegalStateException("jepsen kv: a throwing write of " + w.value() + " to " + target
            + " (after writing it)");
      }
      if (op instanceof Cas cas) {
        if (e.value == cas.expected()) {
          e.value = cas.value();
          return Boolean.TRUE;
        }
        return Boolean.FALSE;
      }
      return ERROR + "unknown kv operation " + op;
    }

    /**
     * Creates a key with its initial value (the create's op, a Long; anything else but a
     * {@link FailingCreate} gives 0). A {@link FailingCreate} throws: the library then refuses
     * the create ({@code REFUSED}) and creates nothing anywhere.
     */
    @Override
    protected PRObject createObject(Command c) {
      if (c.op() instanceof FailingCreate f) {
        throw new IllegalStateException("jepsen kv: a failing create of " + c.target() + " with " + f.value());
      }
      return new KvEntry(c.target(), c.op() instanceof Long v ? v : 0L);
    }
  }

  /**
   * The positive control's unsafe read path: the last value this node's replicas applied for each
   * register, served over HTTP ({@code GET /read?k=K} answers the value or {@code nil}) without
   * going through the ordered path. A replica that is partitioned away or paused answers stale
   * values, so a linearizability checker must reject histories that use it under faults.
   */
  public static final class UnsafeReads {
    private final java.util.concurrent.ConcurrentHashMap<Long, java.util.Optional<Long>> last =
        new java.util.concurrent.ConcurrentHashMap<>();

    void applied(long key, Long value) {
      last.put(key, java.util.Optional.ofNullable(value));
    }

    /** The last applied value of a register, or null when none. */
    public Long read(long key) {
      java.util.Optional<Long> v = last.get(key);
      return v == null ? null : v.orElse(null);
    }

    com.sun.net.httpserver.HttpServer serve(String host, int port) throws java.io.IOException {
      com.sun.net.httpserver.HttpServer http =
          com.sun.net.httpserver.HttpServer.create(new java.net.InetSocketAddress(host, port), 64);
      http.createContext("/read", ex -> {
        int code = 200;
        String body;
        try {
          String q = ex.getRequestURI().getQuery();
          if (q == null || !q.startsWith("k=")) {
            throw new IllegalArgumentException("expected /read?k=KEY");
          }
          Long v = read(Long.parseLong(q.substring(2)));
          body = v == null ? "nil" : v.toString();
        } catch (RuntimeException e) {
          code = 400;
          body = "error: " + e.getMessage();
        }
        byte[] bytes = body.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        ex.sendResponseHeaders(code, bytes.length);
        try (var out = ex.getResponseBody()) {
          out.write(bytes);
        }
      });
      http.start();
      return http;
    }
  }

  /**
   * Starts a node: {@code --cluster FILE --id N --service register|kv|bank --data DIR
   * [--unsafe-reads [PORT]] [--snapshot-threshold ENTRIES]}, through the same launcher as
   * {@code eyrie node}. Exits 2 for a wrong command line, before anything starts.
   *
   * @param args the command line
   */
  public static void main(String[] args) {
    io.eyrie.multicast.Node.prepareJvm();
    System.exit(NodeCommand.run(args, System.out, System.err));
  }
}
