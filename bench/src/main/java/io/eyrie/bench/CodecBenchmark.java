package io.eyrie.bench;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.protocol.AccessReq;
import io.eyrie.multicast.Codec;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Question: how many microseconds of CPU does Kryo serialization cost per message, against a
 * per-command budget of a few hundred microseconds (see results/multicast.md)? Encodes and
 * decodes a core access request (1 or 8 objects, small op) and a PRObject as a move ships it.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class CodecBenchmark {
  /** What is serialized: access1, access8, account, user50 (Chirper-like user, 50 posts). */
  @Param({"access1", "access8", "account", "user50"})
  public String message;

  private Codec codec;
  private Object value;
  private byte[] bytes;

  /** Builds the codec and the message. */
  @Setup
  public void setup() {
    codec = new Codec(BenchTypes.registry());
    value = switch (message) {
      case "access1" -> new AccessReq(Command.access(new BenchTypes.Op("deposit", 10), BenchTypes.ids(1)));
      case "access8" -> new AccessReq(Command.access(new BenchTypes.Op("transfer", 10), BenchTypes.ids(8)));
      case "account" -> new BenchTypes.Account(ObjId.valueOf(42), 1_000_000);
      case "user50" -> BenchTypes.user(42, 50);
      default -> throw new IllegalArgumentException("unknown message " + message);
    };
    bytes = codec.encode(value);
  }

  /** Encoding only. */
  @Benchmark
  public byte[] encode() {
    return codec.encode(value);
  }

  /** Decoding only. */
  @Benchmark
  public Object decode() {
    return codec.decode(bytes);
  }

  /** A round trip, as one hop of a message costs (sender encodes, receiver decodes). */
  @Benchmark
  public Object roundTrip() {
    return codec.decode(codec.encode(value));
  }

  /** Returns the encoded size, for the report. */
  int size() {
    return bytes.length;
  }
}
