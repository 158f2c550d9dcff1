package io.eyrie.bench;

import io.eyrie.core.ObjId;
import io.eyrie.core.testing.LocationCacheProbe;
import io.eyrie.multicast.GroupId;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Question: what does the client proxy's cache path cost per command on a hit? Measures the
 * proxy's own cache ({@code LocationCache}, Caffeine-bounded, through eyrie-core's testing façade
 * {@link LocationCacheProbe}) holding 100k objects over 4 partitions under its default bound:
 * the lookups alone, and the whole hit path before a command is sent (one lookup per object, the
 * per-command map and the target choice).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class LocationCacheBenchmark {
  /** Objects per command. */
  @Param({"1", "4", "16"})
  public int objects;

  private LocationCacheProbe cache;
  private ObjId[] command;
  private List<ObjId> commandIds;

  /** Fills the cache with 100k objects over 4 partitions. */
  @Setup
  public void setup() {
    cache = new LocationCacheProbe(1_000_000);
    List<GroupId> parts = List.of(GroupId.valueOf("p0"), GroupId.valueOf("p1"), GroupId.valueOf("p2"), GroupId.valueOf("p3"));
    for (long i = 0; i < 100_000; i++) {
      cache.put(ObjId.valueOf(i), parts.get((int) (i % parts.size())));
    }
    command = new ObjId[objects];
    for (int i = 0; i < objects; i++) {
      command[i] = ObjId.valueOf(i * 6_151L % 100_000);
    }
    commandIds = List.of(command);
  }

  /** The lookups alone. */
  @Benchmark
  public void lookups(Blackhole bh) {
    for (ObjId id : command) {
      bh.consume(cache.get(id));
    }
  }

  /** The whole hit path: lookups, the per-command map, and the target choice (the proxy's {@code lookup}). */
  @Benchmark
  public GroupId hitPath() {
    return cache.target(commandIds);
  }
}
