package io.eyrie.core.protocol;

import io.eyrie.core.ObjId;
import io.eyrie.core.PRObject;
import java.util.TreeMap;

/**
 * Channel item: values of objects (a move's payload, or S-SMR's value exchange), or why the
 * sender could not ship them (an object that cannot be encoded); the receiver then answers an
 * error instead of waiting for ever. {@code stale}: they were not shipped because the command was
 * sent on a stale location (a move into a partition retired since the consult), so the receiver
 * answers RETRY and the client asks the oracle again.
 */
public record Values(TreeMap<ObjId, PRObject> objects, String error, boolean stale) {
  public static Values of(TreeMap<ObjId, PRObject> objects) {
    return new Values(objects, null, false);
  }

  public static Values failed(String why) {
    return new Values(new TreeMap<>(), why, false);
  }

  public static Values stale(String why) {
    return new Values(new TreeMap<>(), why, true);
  }
}
