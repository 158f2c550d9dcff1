package io.eyrie.core.protocol;

import io.eyrie.core.Command;

/** Multicast to one partition: execute the command if all its objects are local. */
public record AccessReq(Command cmd) {}
