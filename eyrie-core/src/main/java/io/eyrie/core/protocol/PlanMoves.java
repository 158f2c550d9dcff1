package io.eyrie.core.protocol;

import io.eyrie.core.ObjId;
import io.eyrie.multicast.GroupId;
import java.util.TreeMap;

/** The oracle's answer to {@link PlanReq}: where each object is ({@code from}) and where the plan wants it ({@code to}). */
public record PlanMoves(TreeMap<ObjId, GroupId> from, TreeMap<ObjId, GroupId> to) {}
