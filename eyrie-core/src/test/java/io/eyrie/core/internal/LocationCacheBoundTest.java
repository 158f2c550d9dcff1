package io.eyrie.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.ObjId;
import io.eyrie.core.protocol.Prophecy;
import io.eyrie.multicast.GroupId;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Owns the check of the location cache's bound: filled far past it, it stays within it, an
 * evicted object is a plain miss, and what it still holds is right.
 */
class LocationCacheBoundTest {
  private static final GroupId P0 = GroupId.valueOf("p0");
  private static final GroupId P1 = GroupId.valueOf("p1");

  @Test
  @Timeout(30)
  void filledPastItsBoundItStaysBoundedAndAnEvictedObjectIsAMiss() {
    LocationCache cache = new LocationCache(100);
    assertEquals(100, cache.maxSize());
    for (long i = 0; i < 10_000; i++) {
      cache.put(List.of(ObjId.valueOf(i)), i % 2 == 0 ? P0 : P1);
      if (i % 500 == 0) {
        assertTrue(cache.size() <= 100, "size " + cache.size() + " after " + (i + 1) + " objects");
      }
    }
    assertTrue(cache.size() <= 100, "size " + cache.size());
    int cached = 0;
    ObjId evicted = null;
    for (long i = 0; i < 10_000; i++) {
      ObjId id = ObjId.valueOf(i);
      GroupId g = cache.get(id);
      if (g == null) {
        evicted = id;
      } else {
        cached++;
        assertEquals(i % 2 == 0 ? P0 : P1, g, "a kept entry is the one written");
      }
    }
    assertTrue(cached > 0 && cached <= 100, cached + " cached");
    assertNotNull(evicted);
    assertNull(cache.lookup(List.of(evicted), false), "an evicted object is a miss");
    cache.put(List.of(evicted), P1);
    Prophecy p = cache.lookup(List.of(evicted), false);
    assertNotNull(p, "cached again after the miss");
    assertEquals(P1, p.target());
    assertTrue(cache.size() <= 100);
  }

  @Test
  @Timeout(10)
  void theBoundIsAtLeastOneAndTheDefaultAMillion() {
    assertThrows(IllegalArgumentException.class, () -> new LocationCache(0));
    assertEquals(1_000_000, new LocationCache().maxSize());
  }
}
