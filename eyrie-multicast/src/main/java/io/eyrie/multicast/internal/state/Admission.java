package io.eyrie.multicast.internal.state;

import static io.eyrie.multicast.Status.BAD_REQUEST;
import static io.eyrie.multicast.Status.EXPIRED;
import static io.eyrie.multicast.Status.STALE;

import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.MsgId;
import io.eyrie.multicast.internal.Wire.Start;
import io.eyrie.multicast.internal.state.ClientTable.ClientRecord;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

/**
 * Admission of messages at one group: the validation of a Start (a client's, or one carried by a
 * proposal), the exactly-once checks of a client's Start against the {@link ClientTable}
 * (expired clients, watermarks, duplicates, ids reused with other content) and the pending
 * message it creates in the {@link Ordering}. Refusals and duplicates are answered through the
 * listener. No state of its own: it reads and changes {@link GroupState}'s parts.
 */
final class Admission {
  private final GroupState g;

  Admission(GroupState g) {
    this.g = g;
  }

  /** Why a Start is not a message this group can take, or null. */
  String validate(Start s) {
    if (s == null || s.id() == null || s.dests() == null || s.replyGroup() == null || s.payload() == null) {
      return "incomplete message";
    }
    if (s.id().seq() < 0 || s.id().attempt() < 0) {
      return "negative sequence or attempt number";
    }
    if (s.dests().length == 0) {
      return "no destination";
    }
    for (int i = 0; i < s.dests().length; i++) {
      GroupId d = s.dests()[i];
      if (d == null || !g.members.knows(d)) {
        return "unknown group " + d;
      }
      if (i > 0 && s.dests()[i - 1].compareTo(d) >= 0) {
        return "destinations must be ascending without repeats";
      }
    }
    if (Arrays.binarySearch(s.dests(), g.self) < 0) {
      return "group " + g.self + " is not a destination";
    }
    if (Arrays.binarySearch(s.dests(), s.replyGroup()) < 0) {
      return "reply group " + s.replyGroup() + " is not a destination";
    }
    return null;
  }

  /** Admits a client's Start: answers it if refused or known, or makes it pending. */
  void applyStart(Start s) {
    String invalid = validate(s);
    if (invalid != null) {
      if (s != null && s.id() != null) {
        g.listener().reply(s.id(), new StoredReply(BAD_REQUEST, null, invalid));
      }
      return;
    }
    MsgId id = s.id();
    if (g.clients.mayHaveExecutedBeforeExpiry(id, g.order.isPending(id))) {
      // The client's record expired here, so this group forgot which of its messages it has
      // executed: a message it does not know now, with a seq it once made pending, may be one it
      // executed before the expiry. That holds even if a proposal recreated the record since (the
      // new record only knows the messages learned after it), so the tombstone is checked, not
      // the record. A higher seq was never pending here, so it was never executed here (nor
      // anywhere, since delivery needs this group's proposal) and is accepted. The client must
      // treat EXPIRED as an unknown outcome: another destination may have proposed the message
      // here before this Start, or may yet.
      g.listener().reply(id, new StoredReply(EXPIRED, null, "client " + Long.toHexString(id.client())
          + " was idle longer than the expiry time and this group cannot tell whether it executed message " + id
          + "; the outcome is unknown"));
      return;
    }
    ClientRecord rec = client(s);
    if (id.seq() < rec.watermark) {
      g.listener().reply(id, new StoredReply(STALE, null, "sequence number " + id.seq()
          + " is below the client's watermark " + rec.watermark + " (the command finished or was abandoned)"));
      return;
    }
    Retention.Entry kept = g.retention.get(id);
    if (kept != null && kept.digest != s.digest()) {
      g.listener().reply(id, new StoredReply(BAD_REQUEST, null, "message id " + id + " reused with other content"));
      g.stats.duplicates++;
      return;
    }
    if (rec.delivered.contains(id)) {
      StoredReply r = rec.replies.get(id);
      if (r != null) {
        g.listener().reply(id, r);
      }
      g.stats.duplicates++;
      return;
    }
    Msg m = g.order.get(id);
    if (m != null) {
      if (!m.start.sameContent(s)) {
        g.listener().reply(id, new StoredReply(BAD_REQUEST, null, "message id " + id + " reused with other content"));
      }
      g.stats.duplicates++;
      return;
    }
    newPending(s);
    g.deliverReady();
  }

  /** Touches the client of a start and applies the watermark it carries. */
  ClientRecord client(Start s) {
    long cid = s.id().client();
    ClientRecord rec = g.clients.touch(cid);
    if (g.clients.advanceWatermark(rec, s.watermark(), g.exec::isQueued)) {
      g.exec.dropInboxesBelow(cid, s.watermark(), g.order::isPending);
    }
    return rec;
  }

  /**
   * Makes a message pending in the ordering, enters a multi-destination one in the retention
   * table, and notes its seq in the client's record.
   */
  Msg newPending(Start s) {
    Msg m = g.order.add(s);
    if (s.dests().length > 1) {
      g.retention.add(s.id(), s.dests(), s.digest(), m.localTs);
      g.listener().undecided(s.id());
    }
    ClientRecord rec = g.clients.touch(s.id().client());
    rec.maxPending = Math.max(rec.maxPending, s.id().seq());
    return m;
  }

  /** The clients with a message in progress here, whose records must not expire. */
  Set<Long> activeClients() {
    HashSet<Long> active = new HashSet<>();
    for (MsgId id : g.order.ids()) {
      active.add(id.client());
    }
    g.exec.addActiveClients(active);
    for (MsgId id : g.retention.entries.keySet()) {
      active.add(id.client());
    }
    return active;
  }
}
