package io.eyrie.bench;

import io.eyrie.core.ObjId;
import io.eyrie.core.protocol.Locations;
import io.eyrie.multicast.GroupId;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
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
 * Question: what does the client proxy's cache path cost per command on a hit? Mirrors what
 * eyrie-core's {@code LocationCache.lookup} does before the proxy sends a command whose objects
 * are all cached: one lookup per object in a {@code ConcurrentHashMap<ObjId, GroupId>} of 100k
 * entries, a {@code TreeMap} of the answers, then {@link Locations#mostCommon} to pick the target
 * partition. A copy, not the class itself: {@code LocationCache} is in eyrie-core's internal
 * package, which {@code InternalPackagesTest} forbids other modules' main code to use.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class LocationCacheBenchmark {
  /** Objects per command. */
  @Param({"1", "4", "16"})
  public int objects;

  private final ConcurrentHashMap<ObjId, GroupId> cache = new ConcurrentHashMap<>();
  private ObjId[] command;

  /** Fills the cache with 100k objects over 4 partitions. */
  @Setup
  public void setup() {
    List<GroupId> parts = List.of(GroupId.valueOf("p0"), GroupId.valueOf("p1"), GroupId.valueOf("p2"), GroupId.valueOf("p3"));
    for (long i = 0; i < 100_000; i++) {
      cache.put(ObjId.valueOf(i), parts.get((int) (i % parts.size())));
    }
    command = new ObjId[objects];
    for (int i = 0; i < objects; i++) {
      command[i] = ObjId.valueOf(i * 6_151L % 100_000);
    }
  }

  /** The lookups alone. */
  @Benchmark
  public void lookups(Blackhole bh) {
    for (ObjId id : command) {
      bh.consume(cache.get(id));
    }
  }

  /** The whole hit path: lookups, the per-command map, and the target choice. */
  @Benchmark
  public GroupId hitPath() {
    TreeMap<ObjId, GroupId> where = new TreeMap<>();
    for (ObjId id : command) {
      GroupId g = cache.get(id);
      if (g == null) {
        return null;
      }
      where.put(id, g);
    }
    return Locations.mostCommon(where);
  }
}
