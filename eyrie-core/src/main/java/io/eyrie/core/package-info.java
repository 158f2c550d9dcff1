/**
 * DS-SMR: partitioned, replicated, linearizable services whose objects move to where they are
 * used together.
 *
 * <p>A service defines its objects ({@link io.eyrie.core.PRObject}), its partition server
 * ({@link io.eyrie.core.StateMachine}) and optionally an oracle with its own placement rules
 * ({@code io.eyrie.oracle.OracleStateMachine}), named once in a {@link io.eyrie.core.Service}
 * (the README's "Write a service" walks through a complete one); clients send {@link io.eyrie.core.Command}s
 * through a {@link io.eyrie.core.Client}, which locates, moves, retries and falls back to S-SMR.
 *
 * <pre>{@code
 * // Objects and operations
 * public final class Account extends PRObject {
 *   long balance;
 *   private Account() {}
 *   Account(ObjId id, long balance) { super(id); this.balance = balance; }
 * }
 * public record Transfer(long from, long to, long amount) {}
 *
 * // The server, written as if every object were local
 * public final class BankServer extends StateMachine {
 *   protected Object executeCommand(Command c) {
 *     Transfer t = (Transfer) c.op();
 *     Account a = (Account) getObject(ObjId.valueOf(t.from()));
 *     Account b = (Account) getObject(ObjId.valueOf(t.to()));
 *     if (a.balance < t.amount()) return "insufficient";
 *     a.balance -= t.amount();
 *     b.balance += t.amount();
 *     return "ok";
 *   }
 *   protected PRObject createObject(Command c) { return new Account(c.target(), (Long) c.op()); }
 * }
 *
 * // The service, described once, and a cluster (embedded here) and a client
 * Service bank = Service.newBuilder().type(100, Account.class).type(101, Transfer.class)
 *     .server(BankServer::new).oracle(OracleStateMachine::new).build();
 * EmbeddedCluster cluster = EmbeddedCluster.newBuilder().nodes(3).partitions(4).oracle(true)
 *     .app(bank).start();
 * try (Client client = Client.newBuilder().cluster(cluster.cluster()).service(bank).build()) {
 *   client.sendCreate(Command.create(ObjId.valueOf(1), 100L)).join();
 *   client.sendCreate(Command.create(ObjId.valueOf(2), 0L)).join();
 *   Reply r = client.sendAccess(Command.access(new Transfer(1, 2, 30), ObjId.valueOf(1), ObjId.valueOf(2))).join();
 * }
 * }</pre>
 */
package io.eyrie.core;
