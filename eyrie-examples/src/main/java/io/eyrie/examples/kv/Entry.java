package io.eyrie.examples.kv;

import io.eyrie.core.ObjId;
import io.eyrie.core.PRObject;

/** One key of the store: the object's id is the key, and it holds a string. */
public final class Entry extends PRObject {
  String value;

  private Entry() {} // for the codec

  Entry(ObjId key, String value) {
    super(key);
    this.value = value;
  }
}
