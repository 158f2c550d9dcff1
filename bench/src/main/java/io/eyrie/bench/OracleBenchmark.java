package io.eyrie.bench;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.protocol.ConsultReq;
import io.eyrie.core.protocol.Prophecy;
import io.eyrie.core.protocol.SsmrReq;
import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.oracle.OracleStateMachine;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Question: how much CPU does the oracle spend per prophecy (a consult for a command it must
 * place), and does it grow with the number of objects it tracks? The oracle is filled through
 * its {@code deliver} path with SSMR-style creates, as the replicated log would apply them.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class OracleBenchmark {
  /** Objects the oracle tracks. */
  @Param({"10000", "100000"})
  public int tracked;

  /** Objects per consulted command. */
  @Param({"2", "8"})
  public int objects;

  private static final int COMMANDS = 1024;
  private OracleStateMachine oracle;
  private ConsultReq[] consults;
  private int next;

  /** Builds the oracle state and a ring of consult requests over random existing objects. */
  @Setup(Level.Trial)
  public void setup() {
    ClusterConfig.Builder b = ClusterConfig.newBuilder().node(1, "127.0.0.1", 1, 2);
    for (int p = 0; p < 4; p++) {
      b.group(GroupId.valueOf("p" + p), ClusterConfig.Kind.PARTITION, List.of(1));
    }
    GroupId self = GroupId.valueOf("oracle");
    b.group(self, ClusterConfig.Kind.ORACLE, List.of(1));
    oracle = new OracleStateMachine();
    oracle.init(self, b.build(), new Codec(BenchTypes.registry()));
    BenchTypes.Op op = new BenchTypes.Op("create", 0);
    for (long i = 0; i < tracked; i++) {
      Object create = new SsmrReq(Command.create(ObjId.valueOf(i), op));
      oracle.deliver(new ApplyContext(self, create));
    }
    ThreadLocalRandom r = ThreadLocalRandom.current();
    consults = new ConsultReq[COMMANDS];
    for (int c = 0; c < COMMANDS; c++) {
      ObjId[] ids = new ObjId[objects];
      for (int i = 0; i < objects; i++) {
        ids[i] = ObjId.valueOf(r.nextLong(tracked));
      }
      consults[c] = new ConsultReq(Command.access(new BenchTypes.Op("transfer", 1), ids));
    }
    Object check = oracle.query(consults[0]);
    if (!(check instanceof Prophecy p) || p.status() != Prophecy.Status.RETRY) {
      throw new IllegalStateException("oracle not filled: " + check);
    }
  }

  /** One consult, as the oracle's query path answers it. */
  @Benchmark
  public Object consult() {
    next = (next + 1) & (COMMANDS - 1);
    return oracle.query(consults[next]);
  }

  /** The minimum a delivery context needs for the oracle's create path. */
  private record ApplyContext(GroupId group, Object payload) implements ExecutionContext {
    @Override
    public MsgId id() {
      throw new UnsupportedOperationException("not needed by the oracle");
    }

    @Override
    public List<GroupId> dests() {
      return List.of(group);
    }

    @Override
    public GroupId replyGroup() {
      return group;
    }

    @Override
    public byte[] payloadBytes() {
      throw new UnsupportedOperationException("not needed by the oracle");
    }

    @Override
    public long logTime() {
      return 0;
    }

    @Override
    public void send(GroupId to, Object item) {}

    @Override
    public void sendEncoded(GroupId to, byte[] encoded) {}

    @Override
    public List<Object> received(GroupId from) {
      return List.of();
    }

    @Override
    public List<GroupId> partitions() {
      return List.of(GroupId.valueOf("p0"), GroupId.valueOf("p1"), GroupId.valueOf("p2"), GroupId.valueOf("p3"));
    }
  }
}
