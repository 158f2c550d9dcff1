package io.eyrie.examples.kv;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.PRObject;
import io.eyrie.core.StateMachine;

/**
 * The key-value store's partition server, written as if every key were local: Eyrie runs it on
 * every replica of every partition, and has moved (or copied) the command's keys here before it
 * runs. Deterministic, like every replicated state machine: no clock, no randomness.
 */
public final class KvServer extends StateMachine {

  @Override
  protected Object executeCommand(Command c) {
    if (c.op() instanceof KvOps.Get) {
      return entry(c.target()).value;
    }
    if (c.op() instanceof KvOps.Put put) {
      Entry e = entry(c.target());
      String old = e.value;
      e.value = put.value();
      return old;
    }
    if (c.op() instanceof KvOps.Copy copy) {
      Entry to = entry(ObjId.valueOf(copy.to()));
      to.value = entry(ObjId.valueOf(copy.from())).value;
      return to.value;
    }
    throw new IllegalArgumentException("unknown operation " + c.op());
  }

  @Override
  protected PRObject createObject(Command c) {
    return new Entry(c.target(), (String) c.op());
  }

  private Entry entry(ObjId key) {
    return (Entry) getObject(key);
  }
}
