package io.eyrie.core;

/**
 * A partitioned, replicated object: the unit of state that lives in exactly one partition and
 * that DS-SMR moves between partitions. Application objects extend this class, keep their state
 * in fields that Kryo can serialize (register the class in the {@code CodecRegistry}), and have a
 * no-argument constructor (it may be private).
 *
 * <pre>{@code
 * public final class Account extends PRObject {
 *   long balance;
 *   private Account() {}
 *   public Account(ObjId id, long balance) { super(id); this.balance = balance; }
 * }
 * }</pre>
 */
public abstract class PRObject {
  private ObjId id;

  /** For serialization only. */
  protected PRObject() {}

  /**
   * Creates an object with its id.
   *
   * @param id the object's id
   */
  protected PRObject(ObjId id) {
    this.id = id;
  }

  /** Returns the object's id. */
  public final ObjId getId() {
    return id;
  }
}
