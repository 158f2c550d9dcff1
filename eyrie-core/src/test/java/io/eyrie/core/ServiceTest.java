package io.eyrie.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.eyrie.multicast.ClusterConfig;
import io.eyrie.multicast.Codec;
import io.eyrie.multicast.CodecRegistry;
import io.eyrie.multicast.Deliverer;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.testing.RecordingDeliverer;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A service descriptor and the variants {@link Service#toBuilder()} makes of it. */
class ServiceTest {
  static final GroupId ORACLE = GroupId.valueOf("oracle");
  static final ClusterConfig CLUSTER = ClusterConfig.parse("""
      node 1 127.0.0.1 raft=1 client=2
      group oracle oracle 1
      group p0 partition 1
      """);

  /** An object of the service. */
  static final class Item extends PRObject {
    private Item() {}
  }

  /** An operation of the service. */
  record Touch() {}

  /** A server that is never run: these tests only build the service's pieces. */
  static final class Server extends StateMachine {
    @Override
    protected Object executeCommand(Command c) {
      return null;
    }

    @Override
    protected PRObject createObject(Command c) {
      return null;
    }
  }

  final Service original = Service.newBuilder()
      .type(100, Item.class)
      .type(101, Touch.class)
      .server(Server::new)
      .oracle(RecordingDeliverer::new)
      .build();

  Deliverer oracleOf(Service s) {
    return s.deliverers().create(ORACLE, CLUSTER, new Codec(s.registry()));
  }

  @Test
  void aVariantKeepsTheTypesAndServerAndChangesOnlyTheOracle() {
    AtomicInteger made = new AtomicInteger();
    Deliverer other = new RecordingDeliverer();
    Service variant = original.toBuilder().oracle(() -> {
      made.incrementAndGet();
      return other;
    }).build();

    assertEquals(original.registry().registrations(), variant.registry().registrations());
    assertSame(other, oracleOf(variant));
    assertNotSame(other, oracleOf(original), "the original keeps its oracle");
    assertEquals(1, made.get());
    assertInstanceOf(PartitionServer.class,
        variant.deliverers().create(GroupId.valueOf("p0"), CLUSTER, new Codec(variant.registry())));
  }

  @Test
  void anUnchangedCopyEqualsTheOriginalButIsAnotherService() {
    Service copy = original.toBuilder().build();

    assertNotSame(original, copy);
    assertEquals(original.registry().registrations(), copy.registry().registrations());
    assertInstanceOf(RecordingDeliverer.class, oracleOf(copy));
  }

  @Test
  void aTypeAddedToTheCopyIsNotInTheOriginal() {
    record Extra() {}
    Service more = original.toBuilder().type(102, Extra.class).build();

    assertSame(Extra.class, more.registry().registrations().get(102));
    assertFalse(original.registry().registrations().containsKey(102));
    assertTrue(more.registry().registrations().keySet().containsAll(original.registry().registrations().keySet()));
  }

  @Test
  void theCopyChecksItsIdsAgain() {
    record Clash() {}
    assertThrows(IllegalArgumentException.class, () -> original.toBuilder().type(101, Clash.class).build());
  }

  /** A type of release N, whose fields will change. */
  static final class ProfileV1 {
    String name;
  }

  /** The same type in release N+1, with a field added. */
  static final class ProfileV2 {
    String name;
    long since = -1;
  }

  @Test
  void aCompatibleTypeIsReadAcrossReleasesAndKeptByACopy() {
    Service n = original.toBuilder().type(102, ProfileV1.class, CodecRegistry.Encoding.COMPATIBLE).build();
    Service n1 = original.toBuilder().type(102, ProfileV2.class, CodecRegistry.Encoding.COMPATIBLE).build();
    assertEquals(CodecRegistry.Encoding.COMPATIBLE, n.registry().encoding(102));
    assertEquals(CodecRegistry.Encoding.DEFAULT, n.registry().encoding(100));
    assertEquals(n.registry(), n.toBuilder().build().registry(), "a copy keeps the encoding");

    ProfileV1 old = new ProfileV1();
    old.name = "ada";
    ProfileV2 read = assertInstanceOf(ProfileV2.class, new Codec(n1.registry()).decode(new Codec(n.registry()).encode(old)));
    assertEquals("ada", read.name);
    assertEquals(-1, read.since, "the added field keeps its constructor's value");
    read.since = 1815;
    ProfileV1 back = assertInstanceOf(ProfileV1.class, new Codec(n.registry()).decode(new Codec(n1.registry()).encode(read)));
    assertEquals("ada", back.name);

    record Point(int x) {}
    assertThrows(IllegalArgumentException.class,
        () -> original.toBuilder().type(103, Point.class, CodecRegistry.Encoding.COMPATIBLE).build(),
        "records keep the default encoding");
  }
}
