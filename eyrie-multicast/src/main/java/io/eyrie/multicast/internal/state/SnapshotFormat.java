package io.eyrie.multicast.internal.state;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The versions of the snapshot format and the parts of a snapshot that make one build read
 * another's (docs/design.md, 4.7.1): the header and the trailing extensions.
 *
 * <p>The header is the format version (an int, the first four bytes of every snapshot since
 * version 2) and, from version 8, the lowest version that may read the snapshot (a varint). A
 * reader accepts:
 *
 * <ul>
 *   <li>the previous version, {@link #PREVIOUS} (written by the release before this one, which
 *       has neither a lowest-reader field nor extensions);
 *   <li>this build's version, {@link #VERSION};
 *   <li>a newer version whose lowest reader is at most {@link #VERSION}: its writer promises that
 *       everything it added is in extensions, which this build skips.
 * </ul>
 *
 * <p>Anything else is refused with one line naming the snapshot's version and the versions this
 * build reads, before any of the state is touched.
 *
 * <p>The extensions close a snapshot of version 8 or newer: a count, then each as a tag and
 * length-prefixed bytes, in tag order. A reader gives the tags it knows to their parts and skips
 * the others. This build knows none and writes none.
 *
 * <p>A writer uses the oldest version that holds what it writes: a snapshot without extensions
 * is written as version 7, which says the same, so a node of the previous release can install
 * one that a leader of this release sends it during a rolling upgrade.
 */
public final class SnapshotFormat {
  /**
   * The newest version this build reads and writes (when a snapshot has extensions). 8: the lowest-reader field and the extensions (issue 29).
   * 7: the retention table, no replies awaiting started-signals (design 4.3.1); 6: deferred
   * messages; 5: the groups this group knows of; 3: one section per part of the state; 2: the
   * highest pending seqs, encoded Data items, conflicting messages.
   */
  public static final int VERSION = 8;
  /**
   * The previous version, which this build still reads, and writes when a snapshot has no
   * extensions: the layout of issue 25 step 1.
   */
  public static final int PREVIOUS = 7;
  /** The lowest version that reads a snapshot of version 8 this build writes. */
  static final int LOWEST_READER = 8;

  private SnapshotFormat() {}

  /**
   * Writes the header of a snapshot and returns its version: {@link #PREVIOUS} if it has no
   * extensions, else {@link #VERSION} with {@link #LOWEST_READER}.
   */
  static int writeHeader(Output out, boolean extensions) {
    if (!extensions) {
      out.writeInt(PREVIOUS);
      return PREVIOUS;
    }
    out.writeInt(VERSION);
    out.writeVarInt(LOWEST_READER, true);
    return VERSION;
  }

  /**
   * Reads the header and returns the snapshot's version.
   *
   * @throws IllegalStateException if this build cannot read the snapshot
   */
  static int readHeader(Input in) {
    int version = in.readInt();
    if (version == PREVIOUS) {
      return version;
    }
    if (version < PREVIOUS) {
      throw new IllegalStateException("unsupported snapshot version " + version + ": older than this build reads"
          + reads() + " (a snapshot of the release before the last; upgrade through that release, or start"
          + " this replica from the log or a newer snapshot)");
    }
    int lowest = in.readVarInt(true);
    if (lowest > VERSION) {
      throw new IllegalStateException("unsupported snapshot version " + version + ": it needs a reader of version "
          + lowest + " or newer, and this build reads" + reads() + "; upgrade this node");
    }
    return version;
  }

  private static String reads() {
    return " snapshot versions " + PREVIOUS + " to " + VERSION;
  }

  /**
   * Writes the extensions of a snapshot (tag to bytes) of the version {@link #writeHeader}
   * returned (none in one of version 7).
   */
  static void writeExtensions(Output out, int version, SortedMap<Integer, byte[]> extensions) {
    if (version == PREVIOUS) {
      if (!extensions.isEmpty()) {
        throw new IllegalArgumentException("a snapshot of version " + PREVIOUS + " has no extensions");
      }
      return;
    }
    out.writeVarInt(extensions.size(), true);
    for (Map.Entry<Integer, byte[]> e : extensions.entrySet()) {
      out.writeVarInt(e.getKey(), true);
      SnapshotIo.writeBytes(out, e.getValue());
    }
  }

  /**
   * Reads the extensions of a snapshot of the given version (none before version 8) and returns
   * them by tag; the caller takes those it knows.
   */
  static SortedMap<Integer, byte[]> readExtensions(Input in, int version) {
    SortedMap<Integer, byte[]> out = new TreeMap<>();
    if (version == PREVIOUS) {
      return out;
    }
    int n = in.readVarInt(true);
    for (int i = 0; i < n; i++) {
      int tag = in.readVarInt(true);
      byte[] b = SnapshotIo.readBytes(in);
      if (out.put(tag, b == null ? new byte[0] : b) != null) {
        throw new IllegalStateException("snapshot extension " + tag + " appears twice");
      }
    }
    return out;
  }
}
