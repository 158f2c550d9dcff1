package io.eyrie.multicast.internal.state;

import static io.eyrie.multicast.internal.state.RulesSupport.CLIENT;
import static io.eyrie.multicast.internal.state.RulesSupport.G0;
import static io.eyrie.multicast.internal.state.RulesSupport.G1;
import static io.eyrie.multicast.internal.state.RulesSupport.G2;
import static io.eyrie.multicast.internal.state.RulesSupport.G3;
import static io.eyrie.multicast.internal.state.RulesSupport.ship;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.Execution;
import io.eyrie.multicast.ExecutionContext;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.Wire.Data;
import io.eyrie.multicast.internal.Wire.Propose;
import io.eyrie.multicast.internal.Wire.Start;
import io.eyrie.multicast.testing.ExpectedErrors;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The snapshot of a populated {@link GroupState}, byte for byte: a state with every kind of
 * content (pending undecided, decided and conflicting messages, a parked head with buffered
 * items, a message waiting with resumeLater, a blocked one, the retention table, outboxes, client records with a watermark, a tombstone) must write exactly the bytes below, and
 * a fresh state restored from them must write them again. The bytes were taken again when
 * issue 25 step 1 changed the layout (retention table, no awaiting-starts section), and version
 * 8 (issue 29) added a header field and the extensions around them (a state without extensions
 * is still written as version 7); a change of the layout must change
 * {@link SnapshotFormat#VERSION}, and these constants with it. The previous version's bytes
 * stay: this build must read them (the compatibility promise, design 4.7.1).
 */
@Timeout(30)
@ExpectedErrors("with other content than the message")
class GroupStateSnapshotBytesTest {
  private static final long PLAIN = 0;
  private static final long AWAIT = 1;
  private static final long LATER = 2;
  private static final long BLOCKED = 3;
  private static final long SEND = 4;
  private static final long OTHER_CLIENT = 0xA;
  private static final long WATERMARK_CLIENT = 0xB;

  private final RulesSupport t = new RulesSupport();

  /** Acts by the mode in the payload {@code {seq, mode}} and logs what it does (its state). */
  static final class App extends RulesSupport.LoggingApp {
    @Override
    public Execution deliver(ExecutionContext ctx) {
      long[] p = (long[]) ctx.payload();
      log.add("deliver " + ctx.id());
      if (p[1] == AWAIT) {
        return Execution.awaitFrom(List.of(G1, G3));
      } else if (p[1] == LATER) {
        return Execution.resumeLater(List.of(G2));
      } else if (p[1] == BLOCKED) {
        return Execution.blocked();
      } else if (p[1] == SEND) {
        ctx.send(G1, p[0] * 10);
      }
      return Execution.reply(p[0]);
    }

    @Override
    public Execution resume(ExecutionContext ctx) {
      log.add("resume " + ctx.id());
      return Execution.reply(-1L);
    }
  }

  private GroupState populated() {
    GroupState s = t.group(G0, new App(), 1000);
    // A client that goes idle and expires: its record becomes a tombstone.
    t.submit(s, t.start(OTHER_CLIENT, 0, 0, PLAIN, G0, G0));
    for (int i = 0; i < 6; i++) {
      t.time += 500;
      t.submit(s, t.start(WATERMARK_CLIENT, 10 + i, 3, PLAIN, G0, G0));
    }
    // A decided three-group message (its reply recorded, its Decided items in the outboxes).
    Start waits = t.start(10, PLAIN, G0, G0, G1, G2);
    t.submit(s, waits);
    t.decide(s, waits, 1);
    // A message that sent g1 an item.
    Start sends = t.start(11, SEND, G0, G0, G1);
    t.submit(s, sends);
    t.decide(s, sends, 2);
    // A message waiting off the queue for g2's item, and a blocked one.
    Start later = t.start(1, LATER, G0, G0, G2);
    t.submit(s, later);
    t.decide(s, later, 3);
    t.submit(s, t.start(2, BLOCKED, G0, G0));
    // A parked head with an item from g1 (it waits for g3 too), and a message behind it.
    Start parked = t.start(3, AWAIT, G0, G0, G1, G3);
    t.submit(s, parked);
    t.decide(s, parked, 5);
    ship(s, G1, 0, new Data(parked.id(), t.codec.encode(31L)), new Data(parked.id(), t.codec.encode(32L)));
    t.submit(s, t.start(4, PLAIN, G0, G0));
    // Pending: an undecided message, a decided one behind it, a conflicting one, and an item
    // buffered for the undecided one.
    Start undecided = t.start(20, PLAIN, G0, G0, G3);
    t.submit(s, undecided);
    Start decided = t.start(21, PLAIN, G0, G0, G1);
    t.submit(s, decided);
    t.decide(s, decided, 100);
    Start conflicting = t.start(22, PLAIN, G0, G0, G2);
    t.submit(s, conflicting);
    ship(s, G2, 0, new Propose(t.start(22, SEND, G2, G0, G2)));
    ship(s, G3, 0, new Data(undecided.id(), t.codec.encode(33L)));
    return s;
  }

  @Test
  void aPopulatedStateWritesTheRecordedBytesAndARestoredCopyWritesThemAgain() {
    GroupState s = populated();
    MsgId head = MsgId.valueOf(CLIENT, 3, 0);
    assertTrue(s.clients.tombstones.containsKey(OTHER_CLIENT), "the idle client expired");
    assertNotNull(s.clients.get(WATERMARK_CLIENT));
    assertEquals(3, s.order.pending.size(), "an undecided, a decided and a conflicting message are pending");
    assertEquals(head, s.exec.queue.peek().start.id());
    assertNotNull(s.exec.parkedOn);
    assertTrue(s.exec.inboxes.get(head) != null);
    assertEquals(1, s.exec.offQueue.later.size());
    assertEquals(1, s.exec.offQueue.deferred.size());
    assertEquals(7, s.retainedCount(), "the multi-group messages are retained");
    assertFalse(s.outboxRange(G1, 0, 100).isEmpty());

    byte[] bytes = t.snapshot(s);
    assertEquals(BYTES_V7, HexFormat.of().formatHex(bytes), () -> s.describe());

    GroupState r = t.group(G0, new App(), 1000);
    GroupStateSnapshot.read(r, new Input(HexFormat.of().parseHex(BYTES_V7)));
    assertEquals(BYTES_V7, HexFormat.of().formatHex(t.snapshot(r)));
  }

  /**
   * The compatibility promise (design 4.7.1): the same state in version 8, with the lowest
   * reader and an extension this build does not know (tag 42), is read, and the restored state
   * is the same one. With that extension this build writes exactly these bytes; without
   * extensions it writes version 7, the previous release's bytes (above), which that release
   * reads.
   */
  @Test
  void theSameStateInVersionEightWithAnUnknownExtensionIsRead() {
    GroupState s = populated();
    Output out = new Output(1 << 12, -1);
    GroupStateSnapshot.write(s, out, new TreeMap<>(Map.of(42, new byte[] {1, 2, 3})));
    assertEquals(BYTES_V8, HexFormat.of().formatHex(out.toBytes()));

    GroupState r = t.group(G0, new App(), 1000);
    GroupStateSnapshot.read(r, new Input(HexFormat.of().parseHex(BYTES_V8)));
    assertEquals(BYTES_V7, HexFormat.of().formatHex(t.snapshot(r)));
    assertEquals(s.describe(), r.describe());
  }

  /**
   * Written by the code of issue 25 step 1 (snapshot version 7, the previous release's format,
   * which this build must read); see the class comment. Keep it unchanged.
   */
  private static final String BYTES_V7 = ""
      + "0700000067b00467b0504152544954494fce000167b1504152544954494fce000167b2504152544954494fce000167b3"
      + "504152544954494fce0001650311030167b00167b30100bc840628051f0328000167b0000e00000000000000ffffffff"
      + "ffffffff000167b00e11030167b00167b10100bc84062a051f032a000167b0000f000000000000006400000000000000"
      + "000267b00f67b16411030167b00167b20100bc84062c051f032c000167b0006500000000000000ffffffffffffffff01"
      + "0167b065071ec100000000000001000367b067b2f228803b747d03cd0a0100000a0301010101001ec100000000000003"
      + "000467b067b167b328fb6a16fe713bd70c0100000c050501010101001ec10000000000000a000467b067b167b20032fe"
      + "b1f11c8a240801000008010101010101001ec10000000000000b000367b067b13add83f7925dfd3e0901000009020101"
      + "0101001ec100000000000014000367b067b37d3a4cce406ce3780e0000010101001ec100000000000015000367b067b1"
      + "bf84af1a63830e730f0100000f6400010101001ec100000000000016000367b067b2b75ed447064e42a6650000010102"
      + "67b2000211040167b00167b10167b30100bc840606051f0306020167b0000c000000000000000c000000000000000003"
      + "67b00c67b10567b30511020167b00100bc840608051f0308000167b000ffffffffffffffff0d00000000000000000001"
      + "0367b167b30111030167b00167b20100bc840602051f0302040167b0000a000000000000000a00000000000000000267"
      + "b00a67b2030267b2021ec100000000000003000267b10167b10203093e0309401ec100000000000014000267b30167b3"
      + "010309420111020167b00100bc840604051f0304060167b000ffffffffffffffff0b0000000000000000000367b10200"
      + "0517010080c8f19fb6bc8e8a49040167b00167b10167b20100bc84061404100202170100f4f49ef8dee4aefd7d030167"
      + "b00167b10100bc840616031204160100bc8406160409dc01170100af93a899bd80c7c451040167b00167b10167b30100"
      + "bc84060604180a0a170100fe92fcaae3d8c18ee6030167b00167b10100bc84062a031ec80167b201000317010080c8f1"
      + "9fb6bc8e8a49040167b00167b10167b20100bc840614041002021701009bdcfec7f8a2c1fc65030167b00167b20100bc"
      + "840602031406220100bc84062cca0167b3010001170100af93a899bd80c7c451040167b00167b10167b30100bc840606"
      + "04180a0ac865ac66020b0000000000000003c8650f00000000000000060b000000000000000a000b000000000000000b"
      + "000b000000000000000c000b000000000000000d000b000000000000000e000b000000000000000f00060b0000000000"
      + "00000a0000030914800b000000000000000b0000030916800b000000000000000c0000030918800b000000000000000d"
      + "000003091a800b000000000000000e000003091c800b000000000000000f000003091e801ec100000000000000c86516"
      + "00000000000000061ec100000000000001001ec100000000000002001ec100000000000003001ec10000000000000400"
      + "1ec10000000000000a001ec10000000000000b00021ec10000000000000a0000030914801ec10000000000000b000003"
      + "091680010a00000000000000ec590000000000000000180d040902000904d00164656c6976657220613a302e300a6465"
      + "6c6976657220623a31302e300a64656c6976657220623a31312e300a64656c6976657220623a31322e300a64656c6976"
      + "657220623a31332e300a64656c6976657220623a31342e300a64656c6976657220623a31352e300a64656c6976657220"
      + "633131653a31302e300a64656c6976657220633131653a31312e300a64656c6976657220633131653a312e300a64656c"
      + "6976657220633131653a322e300a64656c6976657220633131653a322e300a64656c6976657220633131653a332e30";

  /**
   * Version 8 of the same state: the version, the lowest reader (8), the sections of version 7
   * unchanged, then one extension (count 1, tag 42, length 3 + 1, the bytes 1 2 3).
   */
  private static final String BYTES_V8 = "08000000" + "08" + BYTES_V7.substring(8) + "01" + "2a" + "04" + "010203";
}
