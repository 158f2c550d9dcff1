package io.eyrie.core.internal;

import io.eyrie.core.Command;
import io.eyrie.core.ObjId;
import io.eyrie.core.protocol.AccessReq;
import io.eyrie.core.protocol.Begun;
import io.eyrie.core.protocol.ConsultReq;
import io.eyrie.core.protocol.CoreReply;
import io.eyrie.core.protocol.CreateReq;
import io.eyrie.core.protocol.DeleteReq;
import io.eyrie.core.protocol.MoveReq;
import io.eyrie.core.protocol.Observed;
import io.eyrie.core.protocol.OracleMapReply;
import io.eyrie.core.protocol.PartitionChange;
import io.eyrie.core.protocol.PartitionStatsReply;
import io.eyrie.core.protocol.PartitionTableReq;
import io.eyrie.core.protocol.PlanMoves;
import io.eyrie.core.protocol.PlanReq;
import io.eyrie.core.protocol.Prophecy;
import io.eyrie.core.protocol.ReadReq;
import io.eyrie.core.protocol.SamplesReq;
import io.eyrie.core.protocol.SsmrReq;
import io.eyrie.core.protocol.StatsReq;
import io.eyrie.core.protocol.Values;
import io.eyrie.core.protocol.Verdict;
import io.eyrie.multicast.CodecRegistry;

/** Registers eyrie-core's classes (ids 40-79). Never renumber; only append. */
public final class CoreTypes {
  private CoreTypes() {}

  /** Adds eyrie-core's registrations to a registry builder. */
  public static CodecRegistry.Builder register(CodecRegistry.Builder r) {
    return r.registerEyrie(40, ObjId.class)
        .registerEyrie(41, ObjId[].class)
        .registerEyrie(42, Command.class)
        .registerEyrie(43, Command.Kind.class)
        .registerEyrie(44, AccessReq.class)
        .registerEyrie(45, MoveReq.class)
        .registerEyrie(46, CreateReq.class)
        .registerEyrie(47, DeleteReq.class)
        .registerEyrie(48, SsmrReq.class)
        .registerEyrie(49, Values.class)
        .registerEyrie(50, Verdict.class)
        .registerEyrie(51, ConsultReq.class)
        .registerEyrie(52, Prophecy.class)
        .registerEyrie(53, StatsReq.class)
        .registerEyrie(54, PartitionStatsReply.class)
        .registerEyrie(55, OracleMapReply.class)
        .registerEyrie(56, CoreReply.class)
        .registerEyrie(57, Begun.class)
        .registerEyrie(58, PlanReq.class)
        .registerEyrie(59, PlanMoves.class)
        .registerEyrie(70, SamplesReq.class)
        .registerEyrie(71, Observed.class)
        .registerEyrie(60, PartitionChange.class)
        .registerEyrie(61, PartitionTableReq.class)
        .registerEyrie(62, io.eyrie.core.PartitionTable.class)
        .registerEyrie(63, io.eyrie.core.PartitionTable.State.class)
        .registerEyrie(64, ReadReq.class)
        .registerEyrie(65, CoreReply.Status.class)
        .registerEyrie(66, Verdict.Status.class)
        .registerEyrie(67, Prophecy.Status.class);
  }
}
