package io.eyrie.multicast.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The errors a test provokes on purpose and expects Eyrie to log ({@link LogWatcher}): regular
 * expressions, each found in the logged line (logger, message and exception). On a class, they
 * hold for its set-up, tear-down and every test; on a method, for that test as well.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
@Inherited
public @interface ExpectedErrors {
  /** The expressions. */
  String[] value();
}
