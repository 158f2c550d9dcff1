package io.eyrie.multicast.internal.state;

import io.eyrie.multicast.Status;

/**
 * A group's reply to a message, as the client table keeps it until the client's watermark passes
 * the message: {@code body} is the encoded reply when the status is OK, {@code error} explains any
 * other status.
 */
public record StoredReply(Status status, byte[] body, String error) {}
