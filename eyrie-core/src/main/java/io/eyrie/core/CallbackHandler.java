package io.eyrie.core;

/**
 * The paper's callback interface: {@link #done} receives the outcome; {@link #error} is called
 * each time the client proxy is told to retry (the proxy retries by itself, and falls back to
 * S-SMR after the configured number of retries).
 */
public interface CallbackHandler {

  /**
   * The command finished.
   *
   * @param reply its outcome
   */
  void done(Reply reply);

  /**
   * The command was answered {@code retry}; the proxy tries again.
   *
   * @param command the command as it will be retried (possibly with more objects)
   * @param retries how many retries so far
   */
  default void error(Command command, int retries) {}

  /**
   * The command's outcome is unknown (the cluster did not answer in time or the client closed).
   *
   * @param cause what happened
   */
  default void failed(Throwable cause) {}
}
