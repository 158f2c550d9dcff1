package io.eyrie.multicast;

import java.util.function.Supplier;

/**
 * The identity of the peer whose request a node is judging, on the thread that calls {@link
 * NodeApp#requiredRole} (see {@link NodeApp#currentPeer()}).
 */
final class RequestPeer {
  private static final ThreadLocal<Identity> PEER = new ThreadLocal<>();

  private RequestPeer() {}

  static Identity current() {
    return PEER.get();
  }

  /** Runs {@code f} with {@code peer} as the current peer, and restores the previous one after. */
  static <T> T with(Identity peer, Supplier<T> f) {
    Identity before = PEER.get();
    PEER.set(peer);
    try {
      return f.get();
    } finally {
      if (before == null) {
        PEER.remove();
      } else {
        PEER.set(before);
      }
    }
  }
}
