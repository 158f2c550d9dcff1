/**
 * Internal use only: eyrie-multicast's implementation (the Ratis state machine, channels,
 * atomic multicast ordering, the Netty client endpoint). Its classes are public only so that the
 * API package can wire them; nothing outside the eyrie-multicast module may use them, and they
 * may change in any release without notice.
 */
package io.eyrie.multicast.internal;
