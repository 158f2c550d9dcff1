package io.eyrie.multicast.internal;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.Status;

/**
 * The fixed codes of the {@link Status}es in client frames and snapshots, the one place that maps
 * them. The codes are those of the int statuses they replaced, so frames and snapshots keep their
 * bytes; a code is never reused for another status.
 */
public final class StatusCodes {
  private StatusCodes() {}

  /** Returns the code of a status. */
  public static int code(Status s) {
    return switch (s) {
      case OK -> 0;
      case ERROR -> 1;
      case UNAVAILABLE -> 2;
      case BAD_REQUEST -> 3;
      case STALE -> 4;
      case EXPIRED -> 5;
    };
  }

  /**
   * Returns the status of a code.
   *
   * @throws IllegalArgumentException if no status has that code
   */
  public static Status status(int code) {
    for (Status s : Status.values()) {
      if (code(s) == code) {
        return s;
      }
    }
    throw new IllegalArgumentException("unknown status code " + code);
  }

  /**
   * Writes a status as its code, as Kryo writes an int, and reads it back. It takes the place of
   * a null marker (it accepts null when writing, to refuse it), so a status in a record costs the
   * same bytes as the int it replaced and never decodes to null. An unknown code fails the read,
   * which makes the frame malformed.
   */
  static final class KryoSerializer extends Serializer<Status> {
    KryoSerializer() {
      super(true, true);
    }

    @Override
    public void write(Kryo kryo, Output output, Status s) {
      if (s == null) {
        throw new KryoException("a status cannot be null");
      }
      output.writeVarInt(code(s), false);
    }

    @Override
    public Status read(Kryo kryo, Input input, Class<? extends Status> type) {
      int code = input.readVarInt(false);
      try {
        return status(code);
      } catch (IllegalArgumentException e) {
        throw new KryoException(e.getMessage());
      }
    }
  }
}
