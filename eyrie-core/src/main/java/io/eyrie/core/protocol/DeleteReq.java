package io.eyrie.core.protocol;

import io.eyrie.core.Command;
import io.eyrie.multicast.GroupId;

/** Multicast to {oracle, partition}: delete the command's object, which the client believes is there. */
public record DeleteReq(Command cmd, GroupId partition) {}
