package io.etcdmemberagent.testing;

import java.time.Duration;
import java.util.function.Supplier;

/** Waits for a condition by polling it, with a deadline; never a bare sleep. */
public final class Poll {
  private Poll() {}

  /**
   * Polls every 20ms until {@code condition} holds; fails with {@code what} after {@code limit}.
   */
  public static Duration until(String what, Duration limit, Supplier<Boolean> condition) {
    long start = System.nanoTime();
    long deadline = start + limit.toNanos();
    while (true) {
      boolean ok;
      try {
        ok = condition.get();
      } catch (RuntimeException e) {
        ok = false;
      }
      if (ok) {
        return Duration.ofNanos(System.nanoTime() - start);
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + limit.toMillis() + "ms waiting for " + what);
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted waiting for " + what);
      }
    }
  }
}
