package io.eyrie.multicast.testing;

import io.eyrie.multicast.Deliverer;

/**
 * A test deliverer whose replicas keep no state worth a snapshot: its snapshot is empty and a
 * restore changes nothing. Subclasses say only how they deliver.
 */
public abstract class StatelessDeliverer implements Deliverer {

  @Override
  public byte[] snapshot() {
    return new byte[0];
  }

  @Override
  public void restore(byte[] state) {}
}
