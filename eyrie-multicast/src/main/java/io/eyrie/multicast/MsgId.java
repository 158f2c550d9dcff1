package io.eyrie.multicast;

/**
 * The identity of one multicast message: the sending client's incarnation, the client's
 * command sequence number, and the attempt number of that command.
 *
 * <p>A client opens a new attempt only after a definite answer that asks it to try again; a
 * resend after a timeout keeps the same id, which is what makes execution exactly-once.
 * Ids are totally ordered (client, seq, attempt); the order breaks ties between messages with
 * the same final timestamp.
 */
public record MsgId(long client, long seq, int attempt) implements Comparable<MsgId> {

  /**
   * Returns the id for the given fields.
   *
   * @param client the client incarnation id
   * @param seq the command sequence number, at least 0
   * @param attempt the attempt number, at least 0
   * @return the id
   */
  public static MsgId valueOf(long client, long seq, int attempt) {
    return new MsgId(client, seq, attempt);
  }

  @Override
  public int compareTo(MsgId o) {
    int c = Long.compare(client, o.client);
    if (c != 0) {
      return c;
    }
    c = Long.compare(seq, o.seq);
    return c != 0 ? c : Integer.compare(attempt, o.attempt);
  }

  @Override
  public String toString() {
    return Long.toHexString(client) + ":" + seq + "." + attempt;
  }
}
