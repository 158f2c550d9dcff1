package io.eyrie.multicast.internal;

import com.esotericsoftware.kryo.io.Input;

/**
 * An {@link Input} over an array that refuses to allocate for a declared length the remaining
 * bytes cannot hold: a string's character count, or the length given to a bulk read of bytes or
 * primitives (each element takes at least one byte, or its fixed width). Kryo allocates from
 * these lengths before reading, and serializers (Kryo's own, such as the one for
 * {@code String[]}, and the application's) pass declared lengths to them. See
 * {@link DeclaredSizes} for the serializers that allocate themselves.
 */
public final class BoundedInput extends Input {
  private final int length;

  /**
   * @param bytes the buffer
   * @param off the slice's start
   * @param len the slice's length
   */
  public BoundedInput(byte[] bytes, int off, int len) {
    super(bytes, off, len);
    this.length = len;
  }

  /** Returns the length of the slice this input reads. */
  public int length() {
    return length;
  }

  @Override
  public String readString() {
    checkCharCount();
    return super.readString();
  }

  @Override
  public StringBuilder readStringBuilder() {
    checkCharCount();
    return super.readStringBuilder();
  }

  /** A non-ASCII string starts with a flagged varint: its character count + 1 (0 null, 1 empty). */
  private void checkCharCount() {
    if (position < limit && (buffer[position] & 0x80) != 0) {
      int start = position;
      int n = readVarIntFlag(true);
      position = start;
      if (n < 0 || n > 1) {
        DeclaredSizes.check(this, Integer.toUnsignedLong(n) - 1, 1, "a string");
      }
    }
  }

  @Override
  public byte[] readBytes(int length) {
    DeclaredSizes.check(this, length, 1, "a byte sequence");
    return super.readBytes(length);
  }

  @Override
  public int[] readInts(int length) {
    DeclaredSizes.check(this, length, 4, "an int sequence");
    return super.readInts(length);
  }

  @Override
  public int[] readInts(int length, boolean optimizePositive) {
    DeclaredSizes.check(this, length, 1, "an int sequence");
    return super.readInts(length, optimizePositive);
  }

  @Override
  public long[] readLongs(int length) {
    DeclaredSizes.check(this, length, 8, "a long sequence");
    return super.readLongs(length);
  }

  @Override
  public long[] readLongs(int length, boolean optimizePositive) {
    DeclaredSizes.check(this, length, 1, "a long sequence");
    return super.readLongs(length, optimizePositive);
  }

  @Override
  public float[] readFloats(int length) {
    DeclaredSizes.check(this, length, 4, "a float sequence");
    return super.readFloats(length);
  }

  @Override
  public double[] readDoubles(int length) {
    DeclaredSizes.check(this, length, 8, "a double sequence");
    return super.readDoubles(length);
  }

  @Override
  public short[] readShorts(int length) {
    DeclaredSizes.check(this, length, 2, "a short sequence");
    return super.readShorts(length);
  }

  @Override
  public char[] readChars(int length) {
    DeclaredSizes.check(this, length, 2, "a char sequence");
    return super.readChars(length);
  }

  @Override
  public boolean[] readBooleans(int length) {
    DeclaredSizes.check(this, length, 1, "a boolean sequence");
    return super.readBooleans(length);
  }
}
