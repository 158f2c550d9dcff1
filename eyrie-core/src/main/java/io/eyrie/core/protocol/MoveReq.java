package io.eyrie.core.protocol;

import io.eyrie.core.ObjId;
import io.eyrie.multicast.GroupId;

/** Multicast to {oracle, src, dst}: move the objects that src holds to dst. */
public record MoveReq(ObjId[] objs, GroupId src, GroupId dst) {}
