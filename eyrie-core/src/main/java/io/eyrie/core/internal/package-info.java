/**
 * Internal use only: eyrie-core's implementation details. Nothing outside the eyrie-core module
 * may use these classes; they may change in any release without notice.
 */
package io.eyrie.core.internal;
