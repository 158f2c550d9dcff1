package io.eyrie.core.protocol;

import io.eyrie.core.Command;

/**
 * Query to one partition: execute a command that changes nothing on its objects now, without
 * a log entry, if they are all here and no command in progress here holds or waits for them.
 * Answered OK with the value, RETRY if an object is not here (or the application asks for more
 * objects), or BUSY: then the client sends the command through the log.
 */
public record ReadReq(Command cmd) {}
