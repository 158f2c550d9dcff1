package io.eyrie.multicast.internal.state;

/** Counters kept in a group's replicated state (every replica counts the same). */
public final class StateCounters {
  public long entries;
  public long delivered;
  public long deliveredMulti;
  public long executed;
  public long parks;
  public long duplicates;
  public long itemsSent;
  public long itemsReceived;
}
