package io.eyrie.core.protocol;

import io.eyrie.core.ObjId;
import io.eyrie.multicast.GroupId;
import java.util.TreeMap;

/** The oracle's answer to {@link StatsReq}. */
public record OracleMapReply(TreeMap<ObjId, GroupId> locations) {}
