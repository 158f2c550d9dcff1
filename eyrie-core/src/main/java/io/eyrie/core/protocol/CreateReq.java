package io.eyrie.core.protocol;

import io.eyrie.core.Command;
import io.eyrie.multicast.GroupId;

/** Multicast to {oracle, partition}: create the command's object in the partition if it exists nowhere. */
public record CreateReq(Command cmd, GroupId partition) {}
