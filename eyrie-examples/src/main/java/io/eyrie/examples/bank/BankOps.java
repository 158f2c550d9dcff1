package io.eyrie.examples.bank;

/** The example bank's operations. */
public final class BankOps {
  private BankOps() {}

  /** Moves an amount between two accounts if the source can pay; replies "ok" or "insufficient". */
  public record Transfer(long from, long to, long amount) {}

  /** Reads the balances of the command's accounts; replies a long[] in ascending id order. */
  public record Read() {}

  /** Adds to one account (for tests that need a write); replies the new balance. */
  public record Deposit(long amount) {}
}
