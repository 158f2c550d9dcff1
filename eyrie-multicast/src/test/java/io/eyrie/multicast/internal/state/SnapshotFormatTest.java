package io.eyrie.multicast.internal.state;

import static io.eyrie.multicast.internal.state.RulesSupport.G0;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Which snapshot versions a build reads (design 4.7.1): the previous and its own; a newer one
 * whose lowest reader is this build's version, skipping its extensions; nothing else, refused
 * with one line naming both versions. {@code GroupStateSnapshotBytesTest} reads a populated
 * state of the previous version.
 */
@Timeout(30)
class SnapshotFormatTest {
  private final RulesSupport t = new RulesSupport();

  private GroupState state() {
    GroupState s = t.group(G0, new SimDeliverer(null));
    t.submit(s, t.start(1, 0, G0, G0));
    return s;
  }

  /** This build's snapshot of a small state, rewritten as a newer writer would. */
  private byte[] asNewer(int version, int lowestReader, byte[] extensions) {
    byte[] b = t.snapshot(state());
    assertEquals(SnapshotFormat.PREVIOUS, b[0], "without extensions, version 7");
    Output out = new Output(b.length + extensions.length + 16, -1);
    out.writeInt(version);
    out.writeVarInt(lowestReader, true);
    out.writeBytes(b, 4, b.length - 4);
    out.writeBytes(extensions);
    return out.toBytes();
  }

  private static byte[] oneExtension() {
    Output out = new Output(16, -1);
    out.writeVarInt(1, true); // one extension
    out.writeVarInt(42, true); // a tag this build does not know
    SnapshotIo.writeBytes(out, new byte[] {1, 2, 3});
    return out.toBytes();
  }

  @Test
  void aNewerVersionThatThisBuildMayReadIsReadAndItsUnknownExtensionsSkipped() {
    GroupState r = t.group(G0, new SimDeliverer(null));
    GroupStateSnapshot.read(r, new Input(asNewer(SnapshotFormat.VERSION + 1, SnapshotFormat.VERSION, oneExtension())));
    assertArrayEquals(t.snapshot(state()), t.snapshot(r));
  }

  @Test
  void aNewerVersionThatNeedsANewerReaderIsRefusedNamingBothVersions() {
    int newer = SnapshotFormat.VERSION + 1;
    GroupState r = t.group(G0, new SimDeliverer(null));
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> GroupStateSnapshot.read(r, new Input(asNewer(newer, newer, new byte[] {0}))));
    assertTrue(e.getMessage().contains("unsupported snapshot version " + newer + ": it needs a reader of version "
        + newer), e.getMessage());
    assertTrue(e.getMessage().contains("this build reads snapshot versions " + SnapshotFormat.PREVIOUS + " to "
        + SnapshotFormat.VERSION), e.getMessage());
    assertTrue(e.getMessage().contains("upgrade this node"), e.getMessage());
  }

  @Test
  void aVersionOlderThanThePreviousIsRefusedNamingBothVersions() {
    byte[] b = t.snapshot(state());
    Output out = new Output(b.length, -1);
    out.writeInt(SnapshotFormat.PREVIOUS - 1);
    out.writeBytes(Arrays.copyOfRange(b, 4, b.length));
    GroupState r = t.group(G0, new SimDeliverer(null));
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> GroupStateSnapshot.read(r, new Input(out.toBytes())));
    assertTrue(e.getMessage().contains("unsupported snapshot version " + (SnapshotFormat.PREVIOUS - 1)
        + ": older than this build reads snapshot versions " + SnapshotFormat.PREVIOUS + " to "
        + SnapshotFormat.VERSION), e.getMessage());
  }

  @Test
  void anExtensionTwiceIsRefused() {
    Output ext = new Output(16, -1);
    ext.writeVarInt(2, true);
    for (int i = 0; i < 2; i++) {
      ext.writeVarInt(42, true);
      SnapshotIo.writeBytes(ext, new byte[] {1});
    }
    GroupState r = t.group(G0, new SimDeliverer(null));
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> GroupStateSnapshot.read(r,
        new Input(asNewer(SnapshotFormat.VERSION + 1, SnapshotFormat.VERSION, ext.toBytes()))));
    assertTrue(e.getMessage().contains("extension 42 appears twice"), e.getMessage());
  }

  @Test
  void thisBuildsOwnVersionIsReadAndWithoutExtensionsItWritesThePreviousOne() {
    GroupState r = t.group(G0, new SimDeliverer(null));
    GroupStateSnapshot.read(r, new Input(asNewer(SnapshotFormat.VERSION, SnapshotFormat.LOWEST_READER, new byte[] {0})));
    byte[] again = t.snapshot(r);
    assertArrayEquals(t.snapshot(state()), again);
    assertEquals(SnapshotFormat.PREVIOUS, new Input(again).readInt(), "a node of the previous release reads it");
  }
}
