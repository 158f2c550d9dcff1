package io.eyrie.multicast.internal.transport;

/**
 * The version of the frames of the client port (docs/design.md, 4.7.1), which clients and the
 * nodes' channels to one another's ports speak.
 *
 * <p>A frame's body is a Kryo object, which starts with its class's registration id (Kryo writes
 * the id plus 2 as a varint; 0 is null). A body that starts with byte {@link #MARKER} instead, 1,
 * which is Kryo's "class by name" and never decodes with registration required, carries a
 * version: the marker, the version as a varint (1 or more), then the object. A body without the
 * marker is version 1, the frames of every build before this one; a marker followed by version 0
 * is what Kryo writes for a class by name, and is refused as a malformed frame without Kryo
 * looking the name up. So a build reads the frames of
 * the one before it unchanged, and a frame of a newer version that it does not know is refused
 * with one line naming both versions (the endpoint answers it {@code BAD_REQUEST} and closes that
 * connection; the others go on).
 *
 * <p>This build writes version 1 frames without the marker, which every build reads. A later
 * build that changes the frames writes its version only to peers that read it (a gated feature,
 * design 4.7.1), and keeps reading version 1.
 */
public final class FrameVersion {
  /** The newest frame version this build reads; it writes version 1 without the marker. */
  public static final int VERSION = 1;
  /** The first byte of a body that carries its version. */
  public static final byte MARKER = 1;

  private FrameVersion() {}

  /** A frame of a version this build does not read. */
  public static final class UnsupportedFrameVersionException extends FrameCodec.MalformedFrameException {
    private static final long serialVersionUID = 1L;
    private final int version;

    UnsupportedFrameVersionException(int version) {
      super("unsupported frame version " + version + ": this build reads frame version"
          + (VERSION == 1 ? " 1" : "s 1 to " + VERSION) + "; upgrade this node", null);
      this.version = version;
    }

    /** Returns the frame's version. */
    public int version() {
      return version;
    }
  }

  /**
   * Returns where the Kryo object of a body starts: {@code off} for a body without the marker
   * (version 1), or after the marker and the version.
   *
   * @throws UnsupportedFrameVersionException if the body carries a version this build does not
   *     read
   */
  static int bodyStart(byte[] b, int off, int len) {
    if (len == 0 || b[off] != MARKER) {
      return off;
    }
    // The version: an unsigned varint of at most 5 bytes, 7 bits a byte, low bits first.
    long version = 0;
    int i = 1;
    for (int shift = 0; ; shift += 7, i++) {
      if (i >= len || shift > 28) {
        throw new FrameCodec.MalformedFrameException("malformed frame: a frame version that does not end", null);
      }
      int x = b[off + i];
      version |= (long) (x & 0x7f) << shift;
      if ((x & 0x80) == 0) {
        i++;
        break;
      }
    }
    if (version == 0) {
      // Kryo's "class by name" with name id 0: never valid with registration required, and Kryo
      // would look the name up on the class path before refusing it, so it is refused here.
      throw new FrameCodec.MalformedFrameException("malformed frame: a class named, not registered", null);
    }
    if (version > VERSION) {
      throw new UnsupportedFrameVersionException((int) Math.min(version, Integer.MAX_VALUE));
    }
    return off + i;
  }
}
