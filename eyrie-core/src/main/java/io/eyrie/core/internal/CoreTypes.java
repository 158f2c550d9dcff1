package io.eyrie.core.internal;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.protocol.Msgs;
import io.eyrie.multicast.CodecRegistry;

/** Registers eyrie-core's classes (ids 40-79). Never renumber; only append. */
public final class CoreTypes {
  private CoreTypes() {}

  /** Adds eyrie-core's registrations to a registry. */
  public static CodecRegistry register(CodecRegistry r) {
    return r.registerEyrie(40, ObjId.class)
        .registerEyrie(41, ObjId[].class)
        .registerEyrie(42, Command.class)
        .registerEyrie(43, Command.Kind.class)
        .registerEyrie(44, Msgs.AccessReq.class)
        .registerEyrie(45, Msgs.MoveReq.class)
        .registerEyrie(46, Msgs.CreateReq.class)
        .registerEyrie(47, Msgs.DeleteReq.class)
        .registerEyrie(48, Msgs.SsmrReq.class)
        .registerEyrie(49, Msgs.Values.class)
        .registerEyrie(50, Msgs.Verdict.class)
        .registerEyrie(51, Msgs.ConsultReq.class)
        .registerEyrie(52, Msgs.Prophecy.class)
        .registerEyrie(53, Msgs.StatsReq.class)
        .registerEyrie(54, Msgs.PartitionStatsReply.class)
        .registerEyrie(55, Msgs.OracleMapReply.class)
        .registerEyrie(56, Msgs.CoreReply.class)
        .registerEyrie(57, Msgs.Begun.class)
        .registerEyrie(58, Msgs.PlanReq.class)
        .registerEyrie(59, Msgs.PlanMoves.class)
        .registerEyrie(70, Msgs.SamplesReq.class)
        .registerEyrie(71, Msgs.Observed.class)
        .registerEyrie(60, Msgs.PartitionChange.class)
        .registerEyrie(61, Msgs.PartitionTableReq.class)
        .registerEyrie(62, io.eyrie.core.PartitionTable.class)
        .registerEyrie(63, io.eyrie.core.PartitionTable.State.class)
        .registerEyrie(64, Msgs.ReadReq.class)
        .registerEyrie(65, Msgs.CoreReply.Status.class)
        .registerEyrie(66, Msgs.Verdict.Status.class)
        .registerEyrie(67, Msgs.Prophecy.Status.class);
  }
}
