package io.eyrie.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.core.Command;
import io.eyrie.core.LocalService;
import io.eyrie.core.ObjId;
import io.eyrie.core.Reply;
import io.eyrie.examples.kv.KvOps;
import io.eyrie.examples.kv.KvService;
import io.eyrie.multicast.MulticastException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link LocalService} gives a service author what a cluster's client would get, without a
 * cluster: the example key-value store's answers, and for an application that misbehaves
 * (MisbehavingApplicationTest's, which the same outcomes are checked against on a real cluster)
 * the refusals, undone writes and failures of the real partition and oracle code.
 */
@Timeout(30)
class LocalServiceTest {
  static ObjId id(long v) {
    return ObjId.valueOf(v);
  }

  @Test
  void theKeyValueStoreAnswersAsOnACluster() {
    LocalService kv = LocalService.of(new KvService().get());
    assertTrue(kv.create(Command.create(id(1), "a")).isOk());
    assertEquals(Reply.Status.EXISTS, kv.create(Command.create(id(1), "b")).status());
    assertTrue(kv.create(Command.create(id(2), "b")).isOk());
    assertEquals("a", kv.access(Command.access(new KvOps.Put("c"), id(1))).value(), "a put replies the old value");
    assertEquals("c", kv.read(Command.access(new KvOps.Get(), id(1))).value());
    assertEquals("c", kv.access(Command.access(new KvOps.Copy(1, 2), id(1), id(2))).value());
    Reply missing = kv.access(Command.access(new KvOps.Get(), id(7)));
    assertEquals(Reply.Status.NOT_FOUND, missing.status());
    assertEquals(id(7), missing.object());
    assertEquals(Reply.Status.NOT_FOUND, kv.read(Command.access(new KvOps.Get(), id(7))).status());
    assertEquals(List.of(id(1), id(2)), kv.objectIds());

    kv.restart();
    assertEquals("c", kv.access(Command.access(new KvOps.Get(), id(2))).value(), "the values survive a snapshot");
    assertEquals(Reply.Status.EXISTS, kv.create(Command.create(id(1), "x")).status(), "and so does the oracle's map");
    assertTrue(kv.delete(Command.delete(id(1), null)).isOk());
    assertEquals(Reply.Status.NOT_FOUND, kv.delete(Command.delete(id(1), null)).status());
    assertEquals(List.of(id(2)), kv.objectIds());
    assertTrue(kv.create(Command.create(id(1), "again")).isOk(), "a deleted key is free");
  }

  @Test
  void anUnregisteredTypeFailsAsOnANode() {
    LocalService kv = LocalService.of(new KvService().get());
    assertTrue(kv.create(Command.create(id(1), "a")).isOk());
    assertThrows(IllegalArgumentException.class, () -> kv.access(Command.access(new StringBuilder("op"), id(1))));
    assertEquals("a", kv.access(Command.access(new KvOps.Get(), id(1))).value());
  }

  @Test
  void aMisbehavingApplicationGetsTheClustersOutcomes() {
    LocalService s = LocalService.of(MisbehavingApplicationTest.SERVICE);
    for (long bad : new long[] {MisbehavingApplicationTest.THROWS, MisbehavingApplicationTest.WRONG_ID,
        MisbehavingApplicationTest.UNENCODABLE}) {
      Reply r = s.create(Command.create(id(100), bad));
      assertEquals(Reply.Status.REFUSED, r.status(), bad + ": " + r);
      assertEquals(List.of(), s.objectIds(), "a refused create leaves nothing");
    }
    assertTrue(s.create(Command.create(id(200), 10L)).isOk());
    assertTrue(s.create(Command.create(id(201), 20L)).isOk());
    MulticastException e = assertThrows(MulticastException.class,
        () -> s.access(Command.access(new MisbehavingApplicationTest.AddAll(5, "throw"), id(200), id(201))));
    assertTrue(e.getMessage().contains("failed after writing"), e.getMessage());
    assertThrows(MulticastException.class,
        () -> s.access(Command.access(new MisbehavingApplicationTest.AddAll(5, "spoil"), id(200), id(201))));
    Reply asked = s.access(Command.access(new MisbehavingApplicationTest.AddAll(5, "retry"), id(200), id(201)));
    assertEquals(Reply.Status.NOT_FOUND, asked.status(), "the application asked for an object that does not exist");
    assertEquals(id(999_999), asked.object());
    Object now = s.access(Command.access(new MisbehavingApplicationTest.ReadAll(), id(200), id(201))).value();
    assertArrayEquals(new long[] {10, 20}, (long[]) now, "every failed command's writes were undone");
    assertEquals("done", s.access(Command.access(new MisbehavingApplicationTest.AddAll(1, "none"), id(200), id(201))).value());
    assertTrue(s.delete(Command.delete(id(200), null)).isOk());
  }
}
