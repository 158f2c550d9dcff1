package io.eyrie.core.protocol;

import io.eyrie.core.ObjId;
import io.eyrie.core.PRObject;
import java.util.TreeMap;

/**
 * Channel item: values of objects (a move's payload, or S-SMR's value exchange), or why the
 * sender could not ship them (an object that cannot be encoded); the receiver then answers an
 * error instead of waiting for ever.
 */
public record Values(TreeMap<ObjId, PRObject> objects, String error) {
  public static Values of(TreeMap<ObjId, PRObject> objects) {
    return new Values(objects, null);
  }

  public static Values failed(String why) {
    return new Values(new TreeMap<>(), why);
  }
}
