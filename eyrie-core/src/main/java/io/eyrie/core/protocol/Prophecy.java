package io.eyrie.core.protocol;

import io.eyrie.core.ObjId;
import io.eyrie.multicast.GroupId;
import java.util.TreeMap;

/**
 * The oracle's answer to a consult: a status (NOK settles the command without executing it;
 * RETRY means "here are the locations"), the locations, and the partition the objects should
 * be moved to (or where a new object goes).
 */
public record Prophecy(Status status, TreeMap<ObjId, GroupId> locations, GroupId target, ObjId subject) {
  /** What the oracle prophesies. */
  public enum Status {
    /** The command fails without executing: {@code subject} is missing, or exists already for a create. */
    NOK,
    /** The command goes on: here are the locations and the target. */
    RETRY
  }

  /** A prophecy without a subject. */
  public Prophecy(Status status, TreeMap<ObjId, GroupId> locations, GroupId target) {
    this(status, locations, target, null);
  }

  /** A negative prophecy about one object: the one missing, or the one that exists already. */
  public static Prophecy nok(ObjId subject) {
    return new Prophecy(Status.NOK, null, null, subject);
  }
}
