package io.eyrie.jepsen.node;

import io.eyrie.core.Command;
import io.eyrie.core.Eyrie;
import io.eyrie.core.ObjId;
import io.eyrie.core.PRObject;
import io.eyrie.core.StateMachine;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.CodecRegistry;
import io.eyrie.multicast.Node;
import io.eyrie.multicast.NodeOptions;
import io.eyrie.oracle.OracleStateMachine;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * A node process for the Jepsen harness: hosts the {@code register} or {@code bank} service.
 *
 * <pre>java -cp ... io.eyrie.jepsen.node.JepsenNode --cluster FILE --id N --service register|bank --data DIR</pre>
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

  /** A bank account. */
  public static final class Account extends PRObject {
    long balance;

    private Account() {}

    Account(ObjId id, long balance) {
      super(id);
      this.balance = balance;
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

  /** Bank: moves an amount if the source can pay; replies "ok" or "insufficient". */
  public record Transfer(long from, long to, long amount) {}

  /** Bank: reads the balances of the command's accounts, ascending id order (long[]). */
  public record ReadAll() {}

  /** The codec registrations shared by nodes and the harness client. */
  public static CodecRegistry registry() {
    return Eyrie.registry()
        .register(200, Register.class)
        .register(201, Read.class)
        .register(202, Write.class)
        .register(203, Cas.class)
        .register(204, WritePair.class)
        .register(205, Account.class)
        .register(206, Transfer.class)
        .register(207, ReadAll.class);
  }

  /** The register service's partition server. */
  public static final class RegisterServer extends StateMachine {
    @Override
    protected Object executeCommand(Command c) {
      Object op = c.op();
      if (op instanceof Read) {
        return ((Register) getObject(c.target())).value;
      }
      if (op instanceof Write w) {
        ((Register) getObject(c.target())).value = w.value();
        return "ok";
      }
      if (op instanceof Cas cas) {
        Register r = (Register) getObject(c.target());
        if (r.value != null && r.value == cas.expected()) {
          r.value = cas.value();
          return Boolean.TRUE;
        }
        return Boolean.FALSE;
      }
      if (op instanceof WritePair p) {
        ((Register) getObject(ObjId.valueOf(p.k1()))).value = p.v1();
        ((Register) getObject(ObjId.valueOf(p.k2()))).value = p.v2();
        return "ok";
      }
      throw new IllegalArgumentException("unknown register operation " + op);
    }

    @Override
    protected PRObject createObject(Command c) {
      return new Register(c.target(), (Long) c.op());
    }
  }

  /** The bank service's partition server. */
  public static final class BankServer extends StateMachine {
    @Override
    protected Object executeCommand(Command c) {
      Object op = c.op();
      if (op instanceof Transfer t) {
        Account from = (Account) getObject(ObjId.valueOf(t.from()));
        Account to = (Account) getObject(ObjId.valueOf(t.to()));
        if (from.balance < t.amount()) {
          return "insufficient";
        }
        from.balance -= t.amount();
        to.balance += t.amount();
        return "ok";
      }
      if (op instanceof ReadAll) {
        long[] out = new long[c.objects().size()];
        int i = 0;
        for (ObjId id : c.objects()) {
          out[i++] = ((Account) getObject(id)).balance;
        }
        return out;
      }
      throw new IllegalArgumentException("unknown bank operation " + op);
    }

    @Override
    protected PRObject createObject(Command c) {
      return new Account(c.target(), (Long) c.op());
    }
  }

  /**
   * Starts a node.
   *
   * @param args {@code --cluster FILE --id N --service register|bank --data DIR}
   * @throws Exception if the node cannot start
   */
  public static void main(String[] args) throws Exception {
    Map<String, String> opts = parse(args);
    if (!opts.containsKey("cluster") || !opts.containsKey("id")) {
      System.err.println("usage: JepsenNode --cluster FILE --id N --service register|bank --data DIR");
      System.exit(2);
    }
    ClusterConfig cluster = ClusterConfig.load(Path.of(opts.get("cluster")));
    int id = Integer.parseInt(opts.get("id"));
    Path data = Path.of(opts.getOrDefault("data", "data/node-" + id));
    String service = opts.getOrDefault("service", "register");
    if (opts.containsKey("unsafe-reads")) {
      // Not wired yet: needs a local (non-ordered) read path from the client to a replica.
      System.err.println("--unsafe-reads is not implemented yet");
      System.exit(2);
    }
    java.util.function.Supplier<? extends StateMachine> app = switch (service) {
      case "register" -> RegisterServer::new;
      case "bank" -> BankServer::new;
      default -> throw new IllegalArgumentException("unknown service " + service);
    };
    NodeOptions options = NodeOptions.newBuilder().registry(registry()).build();
    Node node = Node.start(cluster, id, data, Eyrie.deliverers(app, OracleStateMachine::new), options);
    System.out.println("jepsen node " + id + " up, service " + service);
    Runtime.getRuntime().addShutdownHook(new Thread(node::close, "eyrie-shutdown"));
    node.awaitClose();
  }

  private static Map<String, String> parse(String[] args) {
    Map<String, String> m = new HashMap<>();
    for (int i = 0; i < args.length; i++) {
      if (!args[i].startsWith("--")) {
        throw new IllegalArgumentException("expected --name [value], got " + args[i]);
      }
      String name = args[i].substring(2);
      if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
        m.put(name, args[++i]);
      } else {
        m.put(name, "true");
      }
    }
    return m;
  }
}
